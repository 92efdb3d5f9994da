"""The Kubernetes naming rules a template's inputs must meet before the API server sees them.

An object the API server would refuse is refused here instead, as one line naming the option.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kit.errors import InputError

#: RFC 1123 label: what a Job's name must be (its pods carry it as the ``job-name`` label).
_DNS_1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
#: Room left in a 63-character label for the suffixes the kit and Kubernetes add
#: (``-merge``; an indexed pod's ``-<index>-<random>`` hostname).
MAX_JOB_NAME = 52
_DNS_1123_SUBDOMAIN = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
)
_RESOURCE_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
#: Whole devices: 1 and up, ASCII digits only (``int`` would take ``"²"`` or ``" 1"``).
_COUNT = re.compile(r"[1-9][0-9]{0,5}")


def check_job_name(name: str, option: str) -> str:
    if len(name) > MAX_JOB_NAME or not _DNS_1123_LABEL.fullmatch(name):
        raise InputError(
            f"{option}: {name!r} is not a Kubernetes job name (lower-case letters, digits and "
            f"'-', starting and ending with a letter or digit, at most {MAX_JOB_NAME} characters)"
        )
    return name


def _is_dns_subdomain(text: str) -> bool:
    return len(text) <= 253 and _DNS_1123_SUBDOMAIN.fullmatch(text) is not None


def check_object_name(name: str, option: str) -> str:
    """The name of a claim or a Secret: a DNS-1123 subdomain."""
    if not _is_dns_subdomain(name):
        raise InputError(
            f"{option}: {name!r} is not a Kubernetes object name (lower-case letters, digits, "
            "'-' and '.', starting and ending with a letter or digit)"
        )
    return name


def _is_kubernetes_domain(domain: str) -> bool:
    return domain == "kubernetes.io" or domain.endswith(".kubernetes.io")


def _is_extended_resource(name: str) -> bool:
    """A device plugin's resource: ``<domain>/<name>``, outside the kubernetes.io domain."""
    domain, slash, resource = name.partition("/")
    return (
        bool(slash)
        and _is_dns_subdomain(domain)
        and not _is_kubernetes_domain(domain)
        and len(resource) <= 63
        and _RESOURCE_NAME.fullmatch(resource) is not None
    )


@dataclass(frozen=True)
class DeviceResource:
    """The accelerator a pod asks its device plugin for, e.g. ``nvidia.com/gpu`` x 1.

    Extended resources are whole devices: the count is a positive integer, and Kubernetes
    requires the request to equal the limit (the templates set both).
    """

    name: str
    count: int

    @classmethod
    def parse(cls, text: str, option: str = "--resource") -> DeviceResource:
        name, equals, count = text.partition("=")
        if not _is_extended_resource(name):
            raise InputError(
                f"{option}: {name!r} is not a device-plugin (extended) resource name: expected "
                "DOMAIN/NAME outside kubernetes.io, such as nvidia.com/gpu"
            )
        if not equals or not _COUNT.fullmatch(count):
            raise InputError(
                f"{option}: the count of {name} must be a whole number of devices, at least 1 "
                f"(NAME=COUNT), got {count!r}"
            )
        return cls(name, int(count))
