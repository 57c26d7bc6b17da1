"""The container suite's fixtures (a Docker engine, the base image, `make images`), for the pods-as-containers
tests here."""

from tests.containers.conftest import base_image, docker, images  # noqa: F401
