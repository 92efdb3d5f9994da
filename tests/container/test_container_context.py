"""Build contexts, without an engine: what goes into each layer, and inputs that must be refused."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import ssl
import tomllib
from pathlib import Path

import pytest
from container_helpers import FIXTURE_VENDORS
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import NameOID

from kit import paths
from kit.container import images
from kit.container.context import vendor_tree_digest, write_kit_context, write_vendor_context
from kit.container.pipconfig import (
    IMAGE_CA_BUNDLE,
    HostPipSettings,
    ca_bundle_text,
    read_host_pip_settings,
)
from kit.container.requirements import kit_runtime_requirements, vendor_image_requirements
from kit.container.wheelhouse import select_wheelhouse
from kit.errors import InputError
from kit.standard import current_torch_release
from kit.vendors import load_vendor

#: The release the kit's current standard certifies (the host's torch).
TORCH_RELEASE = current_torch_release()
TORCH_CP311 = f"torch-{TORCH_RELEASE}+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"


def _ca_pem(common_name: str) -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return certificate.public_bytes(Encoding.PEM)


def _common_names(bundle: str) -> list[str]:
    certificates = x509.load_pem_x509_certificates(bundle.encode())
    return [c.subject.rfc4514_string().removeprefix("CN=") for c in certificates]


def _wheelhouse(tmp_path: Path, *names: str) -> Path:
    directory = tmp_path / "wheelhouse"
    directory.mkdir()
    for name in names:
        (directory / name).write_bytes(name.encode())  # selection goes by file name only
    return directory


def test_kit_requirements_are_the_pyproject_dependencies():
    pyproject = tomllib.loads((paths.kit_home() / "pyproject.toml").read_text())
    declared = pyproject["project"]["dependencies"]
    # The image holds one release: torch pinned to the current standard's, the rest as declared.
    pinned = [f"torch=={TORCH_RELEASE}" if dep.startswith("torch") else dep for dep in declared]
    assert kit_runtime_requirements() == pinned
    assert f"torch=={TORCH_RELEASE}" in kit_runtime_requirements()


def test_kit_context_holds_dockerfile_requirements_wheels_and_pip_settings(tmp_path):
    wheels = _wheelhouse(tmp_path, TORCH_CP311, "numpy-2.0.0-cp311-cp311-linux_x86_64.whl")
    host_bundle = tmp_path / "host-ca.pem"
    host_bundle.write_bytes(_ca_pem("host proxy CA"))
    settings = HostPipSettings(index_url="https://mirror.example/simple", cert=host_bundle)
    wheelhouse = select_wheelhouse([wheels], "3.11", "x86_64")
    context = tmp_path / "context"

    write_kit_context(context, images.load_os_image("debian12"), wheelhouse, settings, None)

    dockerfile = images.load_os_image("debian12").dockerfile
    assert (context / "Dockerfile").read_text() == dockerfile.read_text()
    assert "torch==2.13.0" in (context / "requirements.txt").read_text().splitlines()
    assert sorted(p.name for p in (context / "wheelhouse").iterdir()) == sorted(
        [TORCH_CP311, "numpy-2.0.0-cp311-cp311-linux_x86_64.whl"]
    )
    pip_conf = (context / "pip.conf").read_text()
    assert "index-url = https://mirror.example/simple" in pip_conf
    assert f"cert = {IMAGE_CA_BUNDLE}" in pip_conf
    assert _common_names((context / "ca" / "pip-ca.crt").read_text()) == ["host proxy CA"]
    assert wheelhouse.torch_version == f"{TORCH_RELEASE}+cpu"


def test_extra_ca_is_added_to_the_host_bundle_not_swapped_in(tmp_path):
    host_bundle = tmp_path / "host.pem"
    host_bundle.write_bytes(_ca_pem("public root") + _ca_pem("host proxy CA"))
    extra = tmp_path / "lab-proxy.pem"
    extra.write_bytes(_ca_pem("lab TLS-intercepting proxy"))

    bundle = ca_bundle_text(host_bundle, extra)

    assert _common_names(bundle) == ["public root", "host proxy CA", "lab TLS-intercepting proxy"]


def test_extra_ca_without_host_bundle_extends_the_system_bundle(tmp_path):
    extra = tmp_path / "lab-proxy.pem"
    extra.write_bytes(_ca_pem("lab TLS-intercepting proxy"))
    defaults = ssl.get_default_verify_paths()
    system_bundle = Path(defaults.cafile or defaults.openssl_cafile).read_text()

    bundle = ca_bundle_text(None, extra)

    assert bundle.startswith(system_bundle.strip()), "the system's public roots must stay trusted"
    assert bundle.endswith(extra.read_text())


def test_no_bundle_anywhere_leaves_pip_on_its_own(tmp_path):
    assert ca_bundle_text(None, None) == ""


def test_extra_ca_that_is_not_a_certificate_is_refused(tmp_path):
    impostor = tmp_path / "proxy-ca.pem"
    impostor.write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    with pytest.raises(InputError, match="not a PEM CA bundle") as info:
        ca_bundle_text(None, impostor)
    assert "\n" not in str(info.value)


def test_host_pip_settings_come_from_the_real_pip_config(tmp_path, monkeypatch):
    find_links = tmp_path / "wheels"
    find_links.mkdir()
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(_ca_pem("host proxy CA"))
    config = tmp_path / "pip.conf"
    config.write_text(
        "[global]\n"
        "index-url = https://mirror.example/simple\n"
        "extra-index-url = file:///srv/local-index https://extra.example/simple\n"
        f"find-links = {find_links}\n"
        f"cert = {bundle}\n"
    )
    for name in [n for n in os.environ if n.startswith("PIP_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(config))
    monkeypatch.setenv("PIP_TRUSTED_HOST", "mirror.example")

    settings = read_host_pip_settings()

    assert settings.index_url == "https://mirror.example/simple"
    assert settings.extra_index_urls == ("https://extra.example/simple",)
    assert settings.dropped == ("file:///srv/local-index",)
    assert settings.find_links_dirs == (find_links,)
    assert settings.cert == bundle
    assert settings.trusted_hosts == ("mirror.example",)


def test_wheelhouse_picks_the_torch_wheel_for_the_image_python_and_machine(tmp_path):
    wheels = _wheelhouse(
        tmp_path,
        f"torch-{TORCH_RELEASE}+cpu-cp310-cp310-manylinux_2_28_x86_64.whl",
        f"torch-{TORCH_RELEASE}+cpu-cp311-cp311-manylinux_2_28_aarch64.whl",
        TORCH_CP311,
    )
    wheelhouse = select_wheelhouse([wheels], "3.11", "x86_64")
    assert wheelhouse.torch_wheel.name == TORCH_CP311
    assert wheelhouse.others == ()  # other torch builds are never offered to pip


def test_wheelhouse_with_the_wrong_torch_release_is_refused(tmp_path):
    wheels = _wheelhouse(tmp_path, "torch-2.12.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
    with pytest.raises(InputError, match=f"no torch-{TORCH_RELEASE} wheel for cp311"):
        select_wheelhouse([wheels], "3.11", "x86_64")


def test_wheelhouse_with_cpu_and_cuda_builds_is_ambiguous(tmp_path):
    wheels = _wheelhouse(
        tmp_path,
        TORCH_CP311,
        f"torch-{TORCH_RELEASE}+cu126-cp311-cp311-manylinux_2_28_x86_64.whl",
    )
    with pytest.raises(InputError, match="several fitting torch wheels"):
        select_wheelhouse([wheels], "3.11", "x86_64")


def test_no_wheelhouse_at_all_says_to_pass_one():
    with pytest.raises(InputError, match="--wheelhouse DIR"):
        select_wheelhouse([], "3.11", "x86_64")


def test_requirement_escaping_the_vendor_dir_is_refused(tmp_path):
    vendor_dir = tmp_path / "escaper"
    shutil.copytree(FIXTURE_VENDORS / "device-invisible", vendor_dir)
    profile = (vendor_dir / "vendor.yaml").read_text()
    profile = profile.replace("id: device-invisible", "id: escaper")
    profile = profile.replace("requirements: []", 'requirements: ["../../../etc/secrets"]')
    (vendor_dir / "vendor.yaml").write_text(profile)
    with pytest.raises(InputError, match="is outside the vendor directory"):
        vendor_image_requirements(load_vendor(vendor_dir))


def test_vendor_context_rewrites_local_requirements_for_the_image(tmp_path):
    vendor = load_vendor(FIXTURE_VENDORS / "recipe-replaces-torch")
    write_vendor_context(tmp_path / "context", vendor)
    requirements = (tmp_path / "context" / "vendor-requirements.txt").read_text().splitlines()
    assert "/opt/ckit-vendors/recipe-replaces-torch/fake-torch" in requirements
    assert (tmp_path / "context" / "vendor" / "fake-torch" / "torch" / "__init__.py").is_file()


def test_vendor_symlink_to_a_host_secret_is_refused(tmp_path):
    secret = tmp_path / "home" / ".config" / "ckit" / "signing.key"
    secret.parent.mkdir(parents=True)
    secret.write_text("PRIVATE KEY")
    vendor_dir = tmp_path / "vendors" / "recipe-install-fails"
    shutil.copytree(FIXTURE_VENDORS / "recipe-install-fails", vendor_dir)
    (vendor_dir / "driver.key").symlink_to(secret)
    with pytest.raises(InputError, match="symbolic link out of the vendor directory"):
        write_vendor_context(tmp_path / "context", load_vendor(vendor_dir))
    assert not (tmp_path / "context" / "vendor").exists()


def test_vendor_symlink_inside_the_vendor_dir_is_kept_as_a_link(tmp_path):
    vendor_dir = tmp_path / "vendors" / "recipe-install-fails"
    shutil.copytree(FIXTURE_VENDORS / "recipe-install-fails", vendor_dir)
    (vendor_dir / "setup.sh").symlink_to("install.sh")
    write_vendor_context(tmp_path / "context", load_vendor(vendor_dir))
    assert os.readlink(tmp_path / "context" / "vendor" / "setup.sh") == "install.sh"


def test_vendor_ids_the_kit_uses_for_its_own_images_are_refused():
    with pytest.raises(InputError, match="reserved"):
        images.vendor_image_tag("debian12", "kit")


def test_vendor_digest_follows_the_recipe_but_not_build_leftovers(tmp_path):
    vendor_dir = tmp_path / "recipe-install-fails"
    shutil.copytree(FIXTURE_VENDORS / "recipe-install-fails", vendor_dir)
    before = vendor_tree_digest(load_vendor(vendor_dir))
    (vendor_dir / "__pycache__").mkdir()
    (vendor_dir / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert vendor_tree_digest(load_vendor(vendor_dir)) == before
    with (vendor_dir / "install.sh").open("a") as script:
        script.write("# edited\n")
    assert vendor_tree_digest(load_vendor(vendor_dir)) != before
