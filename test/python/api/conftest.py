"""Options of the API tests (see pytest.test)."""
import os

import pytest


def pytest_addoption(parser):
    parser.addoption("--models", help="the bundled models (models/)")
    parser.addoption("--bin", help="the build's tools (build/bin)")
    parser.addoption("--ort", help="onnxruntime-node's node_modules, if fetched")


@pytest.fixture(scope="session")
def models(request):
    return request.config.getoption("--models")


@pytest.fixture(scope="session")
def tools(request):
    return request.config.getoption("--bin")


@pytest.fixture(scope="session")
def ort(request):
    path = request.config.getoption("--ort")
    if path and os.path.isdir(os.path.join(path, "onnxruntime-node")):
        from tq.ort import ORT
        return ORT(path)
    return None
