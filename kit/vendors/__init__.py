"""Vendor profiles (``vendors/<id>/vendor.yaml``) and their skip manifests."""

from kit.vendors.profile import (
    ContainerOptions,
    VendorInfo,
    VendorProfile,
    list_vendor_ids,
    load_vendor,
)
from kit.vendors.skips import (
    SKIP_PREFIX,
    SkipDecision,
    SkipEntry,
    SkipManifest,
    load_skip_manifest,
)

__all__ = [
    "SKIP_PREFIX",
    "ContainerOptions",
    "SkipDecision",
    "SkipEntry",
    "SkipManifest",
    "VendorInfo",
    "VendorProfile",
    "list_vendor_ids",
    "load_skip_manifest",
    "load_vendor",
]
