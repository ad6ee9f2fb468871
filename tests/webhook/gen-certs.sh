#!/usr/bin/env bash
# tests/webhook/gen-certs.sh DIR NAME SERIAL — test certificates for the admission webhook.
# Creates DIR/ca.crt + DIR/ca.key (once), then DIR/NAME.crt + DIR/NAME.key: an EC P-256 serving
# certificate signed by that CA with serial SERIAL (hex, e.g. 1001), SANs IP:127.0.0.1,
# DNS:localhost and the in-cluster Service names. openssl CLI only; quiet unless it fails.
set -euo pipefail
dir=$1 name=$2 serial=$3
mkdir -p "$dir"
cd "$dir"
if [ ! -s ca.crt ]; then
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
                -keyout ca.key -out ca.crt -subj "/CN=modelplane-test-ca" \
                -addext "basicConstraints=critical,CA:TRUE" \
                -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
fi
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -keyout "$name.key" -out "$name.csr" -subj "/CN=modelplane-webhook" 2>/dev/null
cat > "$name.ext" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:modelplane-webhook.modelplane-system.svc,DNS:modelplane-webhook.modelplane-system.svc.cluster.local
EXT
openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -set_serial "0x$serial" -days 2 \
        -extfile "$name.ext" -out "$name.crt" 2>/dev/null
rm -f "$name.csr" "$name.ext"
