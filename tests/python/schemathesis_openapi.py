#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Derive the OpenAPI document schemathesis runs against `modelplane registry`.

Usage: schemathesis_openapi.py UPSTREAM.yaml OUT.json

The upstream document (fixtures/model-registry/openapi/model-registry.yaml) is looser than the
server contract it describes (spec/model-registry.md Part B, which upstream's Go server and ours
implement). Run as is, schemathesis's "positive data" is full of requests that upstream rejects
too, so its `positive_data_acceptance` check would only measure the gaps of the document. This
script writes a copy that states the contract; every change names the rule of Part B it encodes.
Nothing here makes the server accept less strict input: the changes only keep *generated valid
data* inside the contract, and document the statuses the server answers on purpose.

Request bodies
  * Strict decoding (B.2): unknown fields are 400. The document composes bodies with allOf and
    never says `additionalProperties: false`, so every body schema is flattened into one object
    and the operation lists its fields in `x-modelplane-body-fields`; schemathesis_hooks.py
    drops any other top-level field from a body before it is sent. (With
    `additionalProperties: false` in these derived schemas, schemathesis 4.32's negative
    generation failed on some bodies, "a `not` whose complement is not spelled out", and ran
    several times slower.)
  * `readOnly` timestamps and output-only artifact links (`experimentId`/`experimentRunId` on
    artifacts) are dropped from request bodies: *Create/*Update do not contain them (B.2).
  * Artifact unions are discriminated by `artifactType` (B.4): each variant pins its value.
  * `MetadataProtoValue` is rejected by the server (B.5: 400 `metadataType not found`), and
    `struct_value` must be base64 of a JSON object (B.5), not arbitrary bytes. Extra keys in a
    value are 400 (B.5: `additionalProperties: false`); see the note at MetadataStructValue.
  * Metric artifacts need a `value` (B.4: 400 `metric value is required`).
  * int64-as-string fields without a pattern in the document (`startTimeSinceEpoch`,
    `endTimeSinceEpoch`, `timestamp`) are decimal millisecond strings (B.2), end times after
    start times (B.4: 400 otherwise); `id` in full-entity bodies (upsert) is an int32 id like
    every path id.
Query parameters
  * `filterQuery` must parse (B.8: parse error → 400); the document allows any printable text.
    It is constrained to a regular subset of the grammar that is valid for every entity kind.
  * `nextPageToken` is opaque, "use the value from a prior response" (document text; B.7.2:
    malformed → 400). It is constrained to well-formed tokens.
Responses
  * The server answers 400 for malformed parameters and bodies on every operation (B.2, B.7.1),
    422 for a missing required field on every body (kept from upstream), and 404 where a create
    refers to a parent that does not exist (B.3 "parent existence checks"; our deviation for
    model versions is listed in docs/registry.md). The document lists these only on some
    operations; they are added where missing, with the document's own Error body. Likewise 409
    for a PATCH that sets an `externalId` another entity has (B.9), and 201 for
    `POST /inference_services` (documented as 200; upstream and we answer 201).
  * The `Artifact` response union is ambiguous as written (a ModelArtifact also validates as a
    DocArtifact); each variant pins its `artifactType` as its discriminator mapping says.
"""
import base64
import copy
import json
import sys

import yaml

REF = "#/components/schemas/"

# B.8: a regular subset of the filterQuery grammar that every entity kind accepts. Property
# names start with `p_` so they are custom properties (never a keyword, never a well-known
# column with a fixed type); `name`, `externalId` and `id` are columns of every kind.
_STR = r"'[A-Za-z0-9 %_.:-]{0,12}'"
_NUM = r"-?[0-9]{1,6}(\.[0-9]{1,3})?"
_PROP = r"p_[a-z0-9_]{0,6}"
_CMP = (
    r"((name|externalId|" + _PROP + r"(\.string_value)?) (=|!=|<>|LIKE|ILIKE) " + _STR
    + r"|id (=|!=|<>|<|<=|>|>=) [1-9][0-9]{0,5}"
    + r"|" + _PROP + r"(\.(int_value|double_value))? (=|!=|<>|<|<=|>|>=) " + _NUM
    + r"|" + _PROP + r"(\.bool_value)? (=|!=) (true|false|TRUE|False)"
    + r"|`[a-z][a-z0-9.-]{0,10}` = \"[a-z0-9 ]{0,8}\""
    + r"|name IN \(" + _STR + r"(, " + _STR + r"){0,3}\))"
)
FILTER_PATTERN = r"^(" + _CMP + r"|\(" + _CMP + r" OR " + _CMP + r"\)( AND " + _CMP + r")?" \
    + r"|" + _CMP + r" (AND|OR) " + _CMP + r"( -- [a-z ]{0,8})?)$"

# B.7.2: standard base64 of "<int32 id>:<int64 value>"; the server only checks the shape (the
# keyset predicate makes any cursor valid), so a few fixed cursors cover it.
PAGE_TOKENS = [base64.b64encode(t.encode()).decode()
               for t in ("1:1", "2:2", "7:1796013565829", "3:0", "100:-1")]

# B.5: struct_value is base64 of a JSON object.
STRUCT_VALUES = [base64.b64encode(t.encode()).decode()
                 for t in ('{}', '{"a":1}', '{"k":"v","n":[1,2.5,true,null]}', '{"x":{"y":"z"}}')]

MS_PATTERN = r"^(0|[1-9][0-9]{0,11})$"
END_MS_PATTERN = r"^[1-9][0-9]{12}$"
ID_PATTERN = r"^[1-9][0-9]{0,8}$"
OUTPUT_ONLY = {"createTimeSinceEpoch", "lastUpdateTimeSinceEpoch", "experimentId",
               "experimentRunId"}


def main(src, dst):
    with open(src, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    schemas = doc["components"]["schemas"]

    def deref(s):
        while "$ref" in s:
            s = schemas[s["$ref"][len(REF):]]
        return s

    def flatten(s, props, required):
        s = deref(s)
        for part in s.get("allOf", []):
            flatten(part, props, required)
        for k, v in s.get("properties", {}).items():
            merged = dict(props.get(k, {}))
            merged.update(copy.deepcopy(v))
            props[k] = merged
        required.update(s.get("required", []))

    def request_schema(name):
        props, required = {}, set()
        flatten({"$ref": REF + name}, props, required)
        artifact_type = props.get("artifactType", {}).get("default")
        for k in list(props):
            if props[k].get("readOnly") or (artifact_type and k in OUTPUT_ONLY):
                del props[k]
        for k, v in props.items():
            if k == "customProperties":
                v["additionalProperties"] = {"$ref": REF + "MetadataValueRequest"}
            if k in ("startTimeSinceEpoch", "timestamp"):
                v["pattern"] = MS_PATTERN
            if k == "endTimeSinceEpoch":
                # B.4: 400 when an end time is before the start time; generated end times
                # have one digit more than any generated start time (a PATCH cannot see the
                # stored start).
                v["pattern"] = END_MS_PATTERN
            if k == "id":
                v["pattern"] = ID_PATTERN
        if artifact_type:
            props["artifactType"] = {"type": "string", "enum": [artifact_type]}
            if artifact_type == "metric" and not name.endswith("Update"):
                required.add("value")
        out = {"type": "object", "properties": props}
        if required:
            out["required"] = sorted(required)
        return out

    def union_request(name):
        s = schemas[name]
        mapping = {}
        variants = []
        for t, ref in s["discriminator"]["mapping"].items():
            vname = ref[len(REF):] + "Variant"
            schemas[vname] = request_schema(ref[len(REF):])
            # B.4: the discriminator is required in practice in a union body
            schemas[vname]["required"] = sorted(set(schemas[vname].get("required", []))
                                                | {"artifactType"})
            mapping[t] = REF + vname
            variants.append({"$ref": REF + vname})
        return {"oneOf": variants,
                "discriminator": {"propertyName": "artifactType", "mapping": mapping}}

    # MetadataValue for requests: no proto values, struct values that decode to a JSON object.
    mv = copy.deepcopy(schemas["MetadataValue"])
    mv["anyOf"] = mv.pop("oneOf")
    mv["anyOf"] = [v for v in mv["anyOf"] if not v["$ref"].endswith("MetadataProtoValue")]
    mv["discriminator"]["mapping"].pop("MetadataProtoValue")
    struct = copy.deepcopy(schemas["MetadataStructValue"])
    struct["properties"]["struct_value"] = {"type": "string", "enum": STRUCT_VALUES}
    # `additionalProperties: false` on this copy made schemathesis 4.32's negative generation
    # fail ("a `not` whose complement is not spelled out"); the hooks drop extra keys instead.
    # (anyOf: the variants are disjoint by `metadataType` anyway.)
    del struct["additionalProperties"]
    schemas["MetadataStructValueRequest"] = struct
    mv["anyOf"] = [{"$ref": REF + "MetadataStructValueRequest"}
                   if v["$ref"].endswith("MetadataStructValue") else v for v in mv["anyOf"]]
    mv["discriminator"]["mapping"]["MetadataStructValue"] = REF + "MetadataStructValueRequest"
    schemas["MetadataValueRequest"] = mv

    # Responses: pin each artifact variant's discriminator value.
    for union in ("Artifact",):
        for t, ref in schemas[union]["discriminator"]["mapping"].items():
            variant = schemas[ref[len(REF):]]
            variant.setdefault("allOf", []).append(
                {"type": "object", "properties": {"artifactType": {"type": "string", "enum": [t]}}})

    params = doc["components"]["parameters"]
    params["filterQuery"]["schema"] = {"type": "string", "pattern": FILTER_PATTERN}
    params["nextPageToken"]["schema"] = {"type": "string", "enum": PAGE_TOKENS}

    def fields(ref):
        # artifactType value ("" for plain bodies) -> the fields the server decodes
        s = schemas[ref[len(REF):]]
        if "oneOf" in s:
            return {deref(v)["properties"]["artifactType"]["enum"][0]:
                    sorted(deref(v)["properties"]) for v in s["oneOf"]}
        return {"": sorted(s["properties"])}

    made = {}
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            if method not in ("get", "post", "patch", "put", "delete"):
                continue
            resp = op["responses"]
            resp.setdefault("400", {"$ref": "#/components/responses/BadRequest"})
            if method == "post" and path.endswith("/inference_services") and "200" in resp:
                # B.3: creates answer 201, also POST /inference_services, which the document
                # lists as 200 (kept: clients depend on 201; docs/registry.md)
                resp.setdefault("201", resp["200"])
            body = op.get("requestBody")
            if not body:
                continue
            media = body["content"]["application/json"]
            name = media["schema"]["$ref"][len(REF):]
            if name not in made:
                if "discriminator" in schemas[name]:
                    schemas[name + "Request"] = union_request(name)
                else:
                    schemas[name + "Request"] = request_schema(name)
                made[name] = REF + name + "Request"
            media["schema"] = {"$ref": made[name]}
            op["x-modelplane-body-fields"] = fields(made[name])
            resp.setdefault("404", {"$ref": "#/components/responses/NotFound"})
            resp.setdefault("409", {"$ref": "#/components/responses/Conflict"})
            resp.setdefault("422", {"$ref": "#/components/responses/UnprocessableEntity"})

    # Responses echo what was stored. `format: uri` (licenseLink, logo) is not validated on
    # input, by upstream or by us (B.4 lists no such rule), so a stored "" is answered back;
    # the request side above keeps the format, so positive data still sends URIs.
    for prop in schemas["BaseModel"]["properties"].values():
        if prop.get("format") == "uri":
            del prop["format"]

    doc["components"]["responses"].setdefault("UnprocessableEntity", {
        "description": "A required field is missing or empty (upstream: 422, code \"Bad Request\")",
        "content": {"application/json": {"schema": {"$ref": REF + "Error"}}}})
    with open(dst, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: schemathesis_openapi.py UPSTREAM.yaml OUT.json")
    main(sys.argv[1], sys.argv[2])
