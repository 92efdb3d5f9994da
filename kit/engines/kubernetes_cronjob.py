"""A Kubernetes CronJob for the periodic canary: the newest nightly torch, every night.

Each scheduled Job runs one pod of the vendor's image (the kit and the vendor's stack
installed, pip in it): it installs the newest torch on the nightly index over the
image's certified one, runs ``ckit run --canary`` into a dated directory on the shared claim,
and writes the comment against the vendor's last certified run beside it (the dashboard's
input). A run whose tests were all fine ends the pod Succeeded, whatever grade a canary gets.

The pod never mounts the vendor's signing key: its canary is unsigned, or, with
``canary_key_secret``, signed with a separate canary key (``CANARY_KEY_NAME``) from that Secret.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from kit.engines.canary import (
    CANARY_KEY_NAME,
    CanaryRun,
    check_canary_run,
    check_cron,
    periodic_lines,
)
from kit.engines.kube_manifest import Container, CronJob, Job, JobSpec, Volume
from kit.engines.kube_names import DeviceResource, check_job_name, check_object_name
from kit.engines.kubernetes import VOLUME, kube_escaped
from kit.engines.template_text import check_rendered, yaml_text
from kit.errors import InputError

SCHEMA = "kubernetes-cronjob.schema.json"
JOB_SCHEMA = "kubernetes-job.schema.json"
#: The run's directory, ``<root>/canary-<UTC time>``: the CLI sets ``CanaryRun.out`` to it.
OUT_VARIABLE = "CKIT_OUT"
#: A night missed by more than this (the controller was down) is skipped, not run late.
STARTING_DEADLINE_SECONDS = 3600
#: Where the pod finds the canary key: the Secret's ``<vendor>-canary.pem``, read-only.
CANARY_KEY_MOUNT = "/var/run/ckit-canary-key"
CANARY_KEY_VOLUME = "ckit-canary-key"


def canary_key_path(vendor: str) -> str:
    """The canary key's path in the pod (``CanaryRun.key`` when a signed canary is asked)."""
    return f"{CANARY_KEY_MOUNT}/{CANARY_KEY_NAME.format(vendor=vendor)}"


@dataclass(frozen=True)
class CronJobOptions:
    name: str
    image: str
    device: DeviceResource
    pvc: str
    #: Where the claim is mounted; each run writes ``<root>/canary-<UTC time>``.
    root: str
    #: A Secret holding ``<vendor>-canary.pem``, a separate canary key: the canary is signed
    #: with it. None: unsigned (the default).
    canary_key_secret: str | None = None
    cron: str = "0 3 * * *"
    time_zone: str = "Etc/UTC"


def _check(run: CanaryRun, options: CronJobOptions) -> None:
    check_canary_run(run)
    check_job_name(options.name, "--name")
    if not options.image or any(c.isspace() for c in options.image):
        raise InputError(f"--image: {options.image!r} is not an image reference")
    for path, option in ((options.root, "--root"), (run.baseline, "--baseline")):
        if not path.startswith("/"):
            raise InputError(f"{option}: {path!r} is a path in the pod and must be absolute")
    check_object_name(options.pvc, "--pvc")
    if (options.canary_key_secret is None) != (run.key is None):
        raise InputError("a signed canary's key comes from --canary-key-secret alone")
    if options.canary_key_secret is not None:
        check_object_name(options.canary_key_secret, "--canary-key-secret")
    check_cron(options.cron)


def _script(run: CanaryRun, options: CronJobOptions) -> str:
    dated = f"{OUT_VARIABLE}={shlex.quote(options.root)}/canary-$(date -u +%Y%m%dT%H%M%SZ)"
    return "\n".join(["set -u", *periodic_lines(run, dated)]) + "\n"


def _container(run: CanaryRun, options: CronJobOptions) -> Container:
    device = {options.device.name: str(options.device.count)}
    container: Container = {
        "name": "canary",
        "image": options.image,
        "command": ["sh", "-c", kube_escaped(_script(run, options))],
        "resources": {"requests": device, "limits": dict(device)},
        "volumeMounts": [{"name": VOLUME, "mountPath": options.root}],
    }
    if options.canary_key_secret is not None:
        container["volumeMounts"].append(
            {"name": CANARY_KEY_VOLUME, "mountPath": CANARY_KEY_MOUNT, "readOnly": True})
    return container


def _job_spec(run: CanaryRun, options: CronJobOptions, labels: dict[str, str]) -> JobSpec:
    volumes: list[Volume] = [
        {"name": VOLUME, "persistentVolumeClaim": {"claimName": options.pvc}}]
    if options.canary_key_secret is not None:
        volumes.append({"name": CANARY_KEY_VOLUME,
                        "secret": {"secretName": options.canary_key_secret}})
    return {
        # A night's run is not retried: the next night runs a newer torch anyway.
        "backoffLimit": 0,
        "template": {
            "metadata": {"labels": labels},
            "spec": {"restartPolicy": "Never", "containers": [_container(run, options)],
                     "volumes": volumes},
        },
    }


def canary_cronjob(run: CanaryRun, options: CronJobOptions) -> CronJob:
    _check(run, options)
    labels = {"app.kubernetes.io/name": "ckit", "app.kubernetes.io/component": "canary"}
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": options.name, "labels": labels},
        "spec": {
            "schedule": options.cron,
            "timeZone": options.time_zone,
            # One device, one canary: a night still running holds the next one back.
            "concurrencyPolicy": "Forbid",
            "startingDeadlineSeconds": STARTING_DEADLINE_SECONDS,
            "jobTemplate": {"metadata": {"labels": labels},
                            "spec": _job_spec(run, options, labels)},
        },
    }


def as_job(cronjob: CronJob) -> Job:
    """The Job each schedule creates, checked by the Job schema the other template uses."""
    template = cronjob["spec"]["jobTemplate"]
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": cronjob["metadata"]["name"], **template["metadata"]},
            "spec": template["spec"]}


def render_canary_cronjob(run: CanaryRun, options: CronJobOptions) -> str:
    cronjob = canary_cronjob(run, options)
    check_rendered(cronjob, SCHEMA)
    check_rendered(as_job(cronjob), JOB_SCHEMA)
    header = [
        f"ckit canary of vendor {run.vendor}: the newest torch on {run.index}",
        f"at {options.cron} ({options.time_zone}); each run in {options.root}/canary-<time>, its",
        f"comment against {run.baseline} in comment.md there. Needs Kubernetes 1.27 or later",
        "(timeZone); apply with: kubectl apply -f FILE",
    ]
    return yaml_text([cronjob], header)
