"""A Kubernetes Indexed Job for a sharded run, and the Job that merges its shards.

The indexed Job runs one pod per shard (``completionMode: Indexed``); each pod reads its shard
from ``JOB_COMPLETION_INDEX``, asks the device plugin for the accelerator, and writes under the
shared volume mounted at the run's root. The merge Job mounts the same volume and runs
``ckit merge``. Kubernetes has no dependency between Jobs: the merge is applied once the indexed
Job has finished (the header of the rendered text gives the commands).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kit.engines.interface import ShardedRun
from kit.engines.kube_manifest import (
    Container,
    EnvVar,
    Job,
    JobSpec,
    Volume,
    VolumeMount,
)
from kit.engines.kube_names import DeviceResource, check_job_name, check_object_name
from kit.engines.template_text import check_rendered, check_sharded_run, yaml_text
from kit.errors import InputError

SCHEMA = "kubernetes-job.schema.json"
INDEX_VARIABLE = "JOB_COMPLETION_INDEX"
VOLUME = "ckit-root"
KEY_VOLUME = "ckit-signing-key"
#: Where shard and merge pods find the vendor's key: the Secret's ``<vendor>.pem``, read-only.
KEY_MOUNT = "/var/run/ckit-key"
COMPONENT_LABEL = "app.kubernetes.io/component"
SHARDS_COMPONENT = "shards"
MERGE_COMPONENT = "merge"
#: A shard's output directory exists after a first try, and a run never overwrites one: a
#: retried pod could only fail. Each shard gets one try and fails alone; the merge names it.
BACKOFF_LIMIT_PER_INDEX = 0
#: Kubernetes expands ``$(VAR)`` in a container's command and reduces ``$$`` to ``$`` before
#: any shell runs it; a ``$`` before ``(`` or ``$`` is doubled so the pod runs what was given.
_KUBE_EXPANDED = re.compile(r"\$(?=[$(])")


def kube_escaped(text: str) -> str:
    """``text`` as a container command word Kubernetes leaves as it is (``$(HOME)`` stays)."""
    return _KUBE_EXPANDED.sub("$$", text)


@dataclass(frozen=True)
class KubernetesOptions:
    job_name: str
    #: The vendor's image: the kit and the vendor's stack installed, ``ckit`` on PATH.
    image: str
    device: DeviceResource
    #: A ReadWriteMany claim every shard pod and the merge pod mount at the run's root.
    pvc: str
    #: A Secret holding ``<vendor>.pem``: each shard signs its report with it (the merge takes
    #: only signed shards), and the merge its own unless ``--no-sign``.
    key_secret: str | None = None


def merge_job_name(options: KubernetesOptions) -> str:
    return f"{options.job_name}-merge"


def _check(run: ShardedRun, options: KubernetesOptions) -> None:
    check_sharded_run(run)
    check_job_name(options.job_name, "--name")
    if not options.image or any(c.isspace() for c in options.image):
        raise InputError(f"--image: {options.image!r} is not an image reference")
    if not run.root.startswith("/"):
        raise InputError(f"--root: {run.root!r} is a mount path in the pod and must be absolute")
    check_object_name(options.pvc, "--pvc")
    if options.key_secret is None:
        raise InputError(
            "each shard signs its report in its pod (the merge takes only signed shards): give "
            f"--key-secret NAME (a Secret holding {run.vendor}.pem)"
        )
    check_object_name(options.key_secret, "--key-secret")


def _labels(component: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": "ckit", COMPONENT_LABEL: component}


def _root_volume(options: KubernetesOptions) -> Volume:
    return {"name": VOLUME, "persistentVolumeClaim": {"claimName": options.pvc}}


def _root_mount(run: ShardedRun) -> VolumeMount:
    return {"name": VOLUME, "mountPath": run.root}


def _job(name: str, labels: dict[str, str], spec: JobSpec) -> Job:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
    }


def _shard_container(run: ShardedRun, options: KubernetesOptions) -> Container:
    device = {options.device.name: str(options.device.count)}
    env, key_mounts, _ = _key_parts(run, options)
    return {
        "name": "shard",
        "image": options.image,
        # The shell expands the index Kubernetes sets in the pod's environment.
        "command": ["sh", "-c", kube_escaped(run.shard_line(f"${INDEX_VARIABLE}"))],
        "env": env,
        # Extended resources are whole devices: Kubernetes requires requests equal to limits.
        "resources": {"requests": device, "limits": dict(device)},
        "volumeMounts": [_root_mount(run), *key_mounts],
    }


def shard_job(run: ShardedRun, options: KubernetesOptions) -> Job:
    labels = _labels(SHARDS_COMPONENT)
    return _job(options.job_name, labels, {
        "completionMode": "Indexed",
        "completions": run.shards,
        "parallelism": run.shards,
        "backoffLimitPerIndex": BACKOFF_LIMIT_PER_INDEX,
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "restartPolicy": "Never",
                "containers": [_shard_container(run, options)],
                "volumes": [_root_volume(options), *_key_parts(run, options)[2]],
            },
        },
    })


_Parts = tuple[list[EnvVar], list[VolumeMount], list[Volume]]


def _key_parts(run: ShardedRun, options: KubernetesOptions) -> _Parts:
    """The merge container's env and mounts, and the pod's volumes, for the signing key."""
    if options.key_secret is None:
        return [], [], []
    env: list[EnvVar] = [{"name": "CKIT_SIGNING_KEY", "value": f"{KEY_MOUNT}/{run.vendor}.pem"}]
    mount: VolumeMount = {"name": KEY_VOLUME, "mountPath": KEY_MOUNT, "readOnly": True}
    volume: Volume = {"name": KEY_VOLUME, "secret": {"secretName": options.key_secret}}
    return env, [mount], [volume]


def merge_job(run: ShardedRun, options: KubernetesOptions) -> Job:
    labels = _labels(MERGE_COMPONENT)
    env, key_mounts, key_volumes = _key_parts(run, options)
    container: Container = {
        "name": "merge",
        "image": options.image,
        "command": [kube_escaped(word) for word in run.merge_argv()],
        "volumeMounts": [_root_mount(run), *key_mounts],
    }
    if env:
        container["env"] = env
    return _job(merge_job_name(options), labels, {
        "completions": 1,
        "parallelism": 1,
        "backoffLimit": 0,
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "restartPolicy": "Never",
                "containers": [container],
                "volumes": [_root_volume(options), *key_volumes],
            },
        },
    })


def kubernetes_jobs(run: ShardedRun, options: KubernetesOptions) -> list[Job]:
    """The indexed shard Job, then the merge Job (apply it after the first has finished)."""
    _check(run, options)
    return [shard_job(run, options), merge_job(run, options)]


def _header(run: ShardedRun, options: KubernetesOptions) -> list[str]:
    shards = f"-l {COMPONENT_LABEL}={SHARDS_COMPONENT}"
    merge = f"-l {COMPONENT_LABEL}={MERGE_COMPONENT}"
    return [
        f"ckit conformance run of vendor {run.vendor} in {run.shards} shards, then one merge.",
        "The merge Job must start after the indexed Job has finished:",
        f"  kubectl apply -f FILE {shards}",
        f"  kubectl wait --for=condition=complete job/{options.job_name} --timeout=24h",
        f"  kubectl apply -f FILE {merge}",
        f"If a shard fails, job/{options.job_name} ends Failed instead of Complete: apply the",
        "merge anyway; it names the shard that failed or is missing.",
        f"Needs Kubernetes 1.29 or later (backoffLimitPerIndex); claim {options.pvc} must be",
        "ReadWriteMany when the shard pods land on more than one node.",
    ]


def render_kubernetes(run: ShardedRun, options: KubernetesOptions) -> str:
    jobs = kubernetes_jobs(run, options)
    for job in jobs:
        check_rendered(job, SCHEMA)
    return yaml_text(jobs, _header(run, options))
