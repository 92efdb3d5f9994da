"""``ckit repo init DIR``: a shared repository ready for submissions, audits, a gate and a portal.

It holds, from the start:

- ``ckit/roots/``: the public half of a new root key; the private half is written where the
  maintainer says, never inside the repository (keep it offline);
- ``keyring/keyring.json`` (no keys yet) signed by that root, so vendors are added with
  ``ckit keys add`` / ``ckit keys vendor`` and one ``ckit keys sign-keyring``;
- ``ckit/released-kits.yaml`` listing this kit (its version and digest), so the runs of this
  kit pass the acceptance policy's ``released_kit``;
- ``ckit/acceptance.yaml`` and ``ckit/gate.yaml``: the current standard's policies, with the
  maintainer's required vendors (and, for a pilot, narrowed runs accepted); the acceptance
  policy's ``standards`` lists every carried torch release with the newest standard certifying
  it, so the repository takes each release's submissions under that release's standard;
- ``.github/workflows/ckit.yml``: the audit bot and the portal (``kit.repository.github_audit``);
- a README saying how to use it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

import kit
from kit import paths
from kit.acceptance import load_policy
from kit.errors import InputError
from kit.grading.released import ReleasedKit, load_released_kits
from kit.hashing import kit_digest
from kit.repository import git
from kit.repository.gate import GATE_POLICY_NAME, load_gate_policy
from kit.repository.github_audit import AuditWorkflowOptions, render_audit_workflow
from kit.repository.layout import KEYRING_DIR, torch_release_of
from kit.repository.repo_config import CONFIG_DIR, RepoConfig
from kit.repository.trust_and_policy import ACCEPTANCE_POLICY_NAME
from kit.signing.keyring import (
    PUBLIC_KEY_SUFFIX,
    KeyringManifest,
    sign_manifest,
    write_manifest,
)
from kit.signing.keys import (
    check_private_key_target,
    generate_private_key,
    keyid_of,
    private_key_pem,
    public_key_pem,
    write_atomically,
    write_private_key,
)
from kit.standard import load_standard
from kit.standard.catalogue import carried_versions
from kit.yamlio import load_yaml

WORKFLOW_PATH = Path(".github", "workflows", "ckit.yml")
README_NAME = "README.md"


@dataclass(frozen=True)
class RepoInitOptions:
    #: Where the root private key goes: outside the repository.
    root_key: Path
    root_passphrase: bytes | None
    #: A trial repository: narrowed runs are accepted (any grade, no skip-policy condition).
    pilot: bool
    #: The gate policy's required vendors.
    required_vendors: tuple[str, ...]
    workflow: AuditWorkflowOptions


@dataclass(frozen=True)
class InitializedRepo:
    directory: Path
    root_keyid: str
    config: RepoConfig
    workflow: Path


def _refuse_target(directory: Path, root_key: Path) -> None:
    if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
        raise InputError(f"{directory} is not a directory")
    if directory.is_dir() and any(p.name != ".git" for p in directory.iterdir()):
        raise InputError(f"{directory} is not empty; `ckit repo init` starts a new repository")
    if root_key.resolve().is_relative_to(directory.resolve()):
        raise InputError(
            f"--root-key {root_key} is inside the repository; the root's private key must stay "
            "out of it (offline)"
        )
    home = paths.kit_home().resolve()
    if root_key.resolve().is_relative_to(home):
        # Said for the root key: the generic refusal's advice (CKIT_SIGNING_KEY) is a vendor's.
        raise InputError(
            f"--root-key {root_key} is inside the kit checkout ({home}); the root's private key "
            "belongs outside it, then offline: pass e.g. --root-key ~/ckit-offline/root.pem"
        )
    check_private_key_target(root_key, force=False)


def _dump(path: Path, header: str, document: Mapping[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = yaml.safe_dump(document, sort_keys=False, default_flow_style=False)
    path.write_text(header + body, encoding="utf-8")


def _released_kits(config: RepoConfig) -> None:
    """This kit, whether or not the kit's own list names it: the repository accepts its runs."""
    digest = kit_digest()
    listed = load_released_kits()
    this = next((k for k in listed if k.digest == digest), None)
    this = this or ReleasedKit(kit.__version__, digest, dt.date.today())
    entries = [dataclasses.asdict(k) for k in (*listed, this)]  # dates stay YAML dates
    unique = list({entry["digest"]: entry for entry in entries}.values())
    header = (
        "# The kits whose runs this repository accepts (acceptance policy: released_kit).\n"
        "# `ckit version --digest` prints a kit's digest; add a kit when you adopt it.\n"
    )
    _dump(config.released_kits, header, {"released": unique})
    load_released_kits(config.released_kits)


def _standards_by_release() -> dict[str, str]:
    """Each carried torch release, as submissions are filed (MAJOR.MINOR), with the newest
    standard certifying it."""
    # Oldest first: a newer standard replaces its release's older one.
    return {torch_release_of(load_standard(v).torch_release): v for v in carried_versions()}


def _policies(config: RepoConfig, options: RepoInitOptions) -> None:
    standard = load_standard()
    acceptance = load_yaml(standard.file(ACCEPTANCE_POLICY_NAME))
    # Every carried release's submissions, each judged against its own standard: a repository
    # outlives a release.
    acceptance.pop("standard", None)
    acceptance.pop("torch_release", None)
    acceptance = {"standards": _standards_by_release(), **acceptance}
    note = f"# From standard {standard.version}'s {{}} (its comments say what each key means).\n"
    if options.pilot:
        # A narrowed run is graded below any bar and fails the skip policy's coverage.
        acceptance["min_grade"] = standard.grades[-1].name
        acceptance.pop("skip_policy_clean", None)
        note += "# A pilot: narrowed runs are accepted. Restore the standard's bar for real.\n"
    releases = ("# standards: each carried torch release, and the standard its runs are judged "
                "against.\n")
    _dump(config.acceptance_policy, note.format(ACCEPTANCE_POLICY_NAME) + releases, acceptance)
    gate = load_yaml(standard.file(GATE_POLICY_NAME))
    gate["required_vendors"] = list(options.required_vendors)
    _dump(config.gate_policy, note.format(GATE_POLICY_NAME), gate)
    # A bad grade or vendor is refused here, not in CI (the vendor is any submission path's).
    load_policy(config.acceptance_policy, vendor="any")
    load_gate_policy(config.gate_policy)


def _readme(config: RepoConfig, root_keyid: str) -> str:
    return f"""# Accelerator conformance results

Vendors submit signed `ckit` runs here with `ckit submit RUN_DIR --repo URL --push`; each
pull request is audited by `.github/workflows/ckit.yml`, which answers with a comment and a
label, and every merge rebuilds the portal.

- `submissions/<torch-release>/<vendor>/<kit-version>/<run-id>/`: the submissions.
- `{KEYRING_DIR}/`: vendor public keys and `keyring.json`, signed by the root key
  `{root_keyid}` (its public half in `{config.roots.relative_to(config.directory.parent)}/`,
  its private half offline).
- `{CONFIG_DIR}/`: what the audit, the gate and the portal judge by (`--repo-config {CONFIG_DIR}`).
  Pull requests are judged by the main branch's copy.

Add a vendor (keyring maintainers, with the offline root key):

    ckit keys add --keyring {KEYRING_DIR} --vendor acme --public-key acme.pub.pem
    ckit keys vendor --keyring {KEYRING_DIR} --vendor acme --name "Acme NPU" \\
        --contact conformance@acme.example --docs-url https://acme.example/ckit
    ckit keys sign-keyring --keyring {KEYRING_DIR} --root-key /offline/root.pem
"""


def init_repository(directory: Path, options: RepoInitOptions) -> InitializedRepo:
    """Write the repository at ``directory`` (new or empty) and its root key outside it."""
    _refuse_target(directory, options.root_key)
    config = RepoConfig(directory / CONFIG_DIR)
    _policies(config, options)  # first: a bad option leaves no key behind
    root = generate_private_key()
    write_private_key(options.root_key, private_key_pem(root, options.root_passphrase),
                      force=False)
    keyid = keyid_of(root.public_key())
    config.roots.mkdir(parents=True, exist_ok=True)
    write_atomically(config.roots / f"{keyid}{PUBLIC_KEY_SUFFIX}",
                     public_key_pem(root.public_key()), mode=0o644)
    write_manifest(directory / KEYRING_DIR, KeyringManifest())
    sign_manifest(directory / KEYRING_DIR, root)
    _released_kits(config)
    workflow = directory / WORKFLOW_PATH
    workflow.parent.mkdir(parents=True, exist_ok=True)
    workflow.write_text(render_audit_workflow(options.workflow), encoding="utf-8")
    (directory / README_NAME).write_text(_readme(config, keyid), encoding="utf-8")
    if not git.is_checkout(directory):
        git.output(["init", "--quiet", "-b", options.workflow.branch], directory)
    return InitializedRepo(directory, keyid, config, workflow)
