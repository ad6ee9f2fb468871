# SPDX-License-Identifier: Apache-2.0
"""The real `model-registry` Python client (PyPI) against `modelplane registry`.

The server URL comes from MR_URL (e.g. http://127.0.0.1:43567, an explicit port is required);
scripts/registry-pyclient-test starts the server and sets it.
"""
import os
import urllib.error
import urllib.parse
import urllib.request

import pytest
from model_registry import ModelRegistry
from model_registry.types import ModelVersionState, RegisteredModelState

MR_URL = os.environ.get("MR_URL", "http://127.0.0.1:8080")


@pytest.fixture()
def client():
    u = urllib.parse.urlparse(MR_URL)
    # A plain-HTTP server: scheme://host plus the port, is_secure=False (no TLS, no token).
    return ModelRegistry(f"{u.scheme}://{u.hostname}", u.port, author="tester", is_secure=False)


def test_root_is_404():
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(MR_URL + "/")
    assert e.value.code == 404


def test_register_get_list_update_archive(client):
    rm = client.register_model(
        "pyclient-model",
        "s3://bucket/path/model.onnx",
        model_format_name="onnx",
        model_format_version="1",
        version="v1",
        description="a model",
        version_description="first",
        storage_key="my-key",
        metadata={"accuracy": 0.91, "epochs": 10, "framework": "pytorch", "prod": True},
    )
    assert rm.id
    assert rm.name == "pyclient-model"
    assert rm.state == RegisteredModelState.LIVE

    # get
    got = client.get_registered_model("pyclient-model")
    assert got is not None and got.id == rm.id
    assert client.get_registered_model("does-not-exist") is None
    mv = client.get_model_version("pyclient-model", "v1")
    assert mv is not None
    assert mv.name == "v1"
    assert mv.author == "tester"
    assert mv.description == "first"
    assert mv.custom_properties["accuracy"] == 0.91
    assert mv.custom_properties["epochs"] == 10
    assert mv.custom_properties["framework"] == "pytorch"
    assert mv.custom_properties["prod"] is True
    art = client.get_model_artifact("pyclient-model", "v1")
    assert art is not None
    assert art.uri == "s3://bucket/path/model.onnx"
    assert art.model_format_name == "onnx"
    assert art.storage_key == "my-key"

    # a second version of the same model; registering v1 again fails
    client.register_model(
        "pyclient-model", "s3://bucket/v2", model_format_name="onnx", model_format_version="1",
        version="v2",
    )
    with pytest.raises(Exception):
        client.register_model(
            "pyclient-model", "s3://bucket/v1-again", model_format_name="onnx",
            model_format_version="1", version="v1",
        )

    # list (the pager follows nextPageToken)
    client.register_model(
        "pyclient-other", "s3://b/o", model_format_name="sklearn", model_format_version="1",
        version="1.0",
    )
    names = [m.name for m in client.get_registered_models()]
    assert "pyclient-model" in names and "pyclient-other" in names
    versions = [v.name for v in client.get_model_versions("pyclient-model")]
    assert sorted(versions) == ["v1", "v2"]
    small = [m.name for m in client.get_registered_models().page_size(1)]
    assert sorted(small) == sorted(names)

    # update
    got.description = "updated"
    got.owner = "someone"
    got = client.update(got)
    assert got.description == "updated"
    again = client.get_registered_model("pyclient-model")
    assert again.description == "updated" and again.owner == "someone"

    art.uri = "s3://bucket/moved"
    client.update(art)
    assert client.get_model_artifact("pyclient-model", "v1").uri == "s3://bucket/moved"

    # archive
    mv.state = ModelVersionState.ARCHIVED
    client.update(mv)
    assert client.get_model_version("pyclient-model", "v1").state == ModelVersionState.ARCHIVED
    again.state = RegisteredModelState.ARCHIVED
    client.update(again)
    final = client.get_registered_model("pyclient-model")
    assert final.state == RegisteredModelState.ARCHIVED
    assert final.description == "updated"
