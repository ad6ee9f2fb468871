# SPDX-License-Identifier: Apache-2.0
# Shared by bench/registry/run and bench/registry/compare (sourced): CPU accounting from /proc.

hz=$(getconf CLK_TCK)

# CPU ticks (user + system) of process $1, and with $2 = 1 of its children too.
ticks() {
        cat /proc/[0-9]*/stat 2>/dev/null | awk -v p="$1" -v k="${2:-0}" '
                { pid = $1; line = $0; sub(/^.*\) /, "", line); split(line, f, " ")
                  if (pid == p || (k && f[2] == p)) t += f[12] + f[13] }
                END { print t + 0 }'
}

# "SERVER DB" ticks of server $1 and of the postmaster $2 with its children (0 without $2:
# SQLite's work is in the server process).
cpu_now() {
        if [ -n "${2:-}" ]; then echo "$(ticks "$1") $(ticks "$2" 1)"; else echo "$(ticks "$1") 0"; fi
}

# "srv_cpu_us=… db_cpu_us=…": CPU per request between two cpu_now readings $1 and $2 over $3
# requests.
cpu_per_request() {
        awk -v b="$1" -v a="$2" -v n="$3" -v hz="$hz" 'BEGIN {
                split(b, x, " "); split(a, y, " "); if (n < 1) n = 1
                printf "srv_cpu_us=%.0f db_cpu_us=%.0f", (y[1] - x[1]) * 1e6 / hz / n, (y[2] - x[2]) * 1e6 / hz / n }'
}
