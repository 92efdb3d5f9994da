"""``ckit image``: reference container images, built without a registry."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kit.cli import add_command, help_when_no_action
from kit.container import images


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "image",
        "build the reference container images (base, kit layer, vendor layer)",
        [
            "ckit image bootstrap debian12",
            "ckit image build --vendor cpu",
        ],
    )
    actions = parser.add_subparsers(dest="image_command", metavar="ACTION")
    _register_bootstrap(actions)
    _register_build(actions)
    help_when_no_action(parser)



def _register_bootstrap(actions: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        actions,
        "bootstrap",
        "make an OS base image with debootstrap and `docker import` (no registry needed)",
        [
            "ckit image bootstrap debian12",
            "ckit image bootstrap debian12 --tag lab/debian12-base:2026-11 --force",
        ],
    )
    parser.add_argument("os_name", metavar="OS", help="reference image name, e.g. debian12")
    parser.add_argument("--tag", help="image tag (default: ckit/<os>-base:<suite>)")
    parser.add_argument("--force", action="store_true", help="rebuild even if the tag exists")
    parser.add_argument("--mirror", help="package mirror URL (default: the image.yaml mirror)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=_bootstrap)


def _register_build(actions: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        actions,
        "build",
        "build the kit layer and a vendor layer on a local base image",
        [
            "ckit image build --vendor cpu",
            "ckit image build --vendor acme --os rhel9 --base rockylinux/rockylinux:9",
            "ckit image build --vendor acme --wheelhouse ./wheels --extra-ca lab-proxy-ca.pem",
        ],
    )
    parser.add_argument("--vendor", required=True, help="vendor id (vendors/<id>)")
    parser.add_argument(
        "--os", dest="os_name", default=images.DEFAULT_OS, help="reference OS image (images/<os>)"
    )
    parser.add_argument(
        "--wheelhouse",
        action="append",
        type=Path,
        metavar="DIR",
        help="directory holding the torch wheel (repeatable; default: the host pip's find-links)",
    )
    parser.add_argument("--base", metavar="NAME", help="base image (default: the OS's default)")
    parser.add_argument(
        "--extra-ca",
        type=Path,
        metavar="FILE",
        help="PEM CA bundle to trust in the image's pip (a lab's TLS-intercepting proxy)",
    )
    parser.add_argument("--quiet", action="store_true", help="do not stream the build output")
    parser.add_argument("--json", action="store_true", help="print the built images as JSON")
    parser.set_defaults(handler=_build)


def _bootstrap(args: argparse.Namespace) -> int:
    from kit.container.bootstrap import bootstrap_base
    from kit.container.engine import connect

    result = bootstrap_base(connect(), args.os_name, args.tag, args.force, args.mirror)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    elif result.created:
        print(f"bootstrapped {result.tag} {result.image_id} in {result.seconds:.1f}s")
        if result.tag != images.load_os_image(args.os_name).default_base:
            print(f"build on it with: ckit image build --os {args.os_name} --base {result.tag}")
    else:
        print(f"{result.tag} exists ({result.image_id}); use --force to rebuild it")
    return 0


def _build(args: argparse.Namespace) -> int:
    from kit.container.engine import connect
    from kit.container.layers import BuildOptions, build_vendor_images

    options = BuildOptions(
        os_name=args.os_name,
        wheelhouse_dirs=tuple(args.wheelhouse) if args.wheelhouse else None,
        base=args.base,
        extra_ca=args.extra_ca,
    )
    sink = None if args.quiet else _to_stderr
    built = build_vendor_images(connect(), args.vendor, options, sink)
    if args.json:
        print(json.dumps([image.to_json() for image in built], indent=2))
        return 0
    for image in built:
        cache = "cached" if image.cached else "built"
        size_gb = image.size_bytes / 1e9
        print(f"{image.tag} {image.image_id} {size_gb:.2f} GB {cache} in {image.build_s:.1f}s")
    return 0


def _to_stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()
