"""The Kubernetes objects the kit writes (a Job, a CronJob), typed: the fields it sets, no others.

Types only (annotations: the objects stay plain dicts, dumped as the kit builds them); the
rendered objects are also checked against the schemas in ``schemas/``.
"""

from __future__ import annotations

from typing import TypedDict


class Metadata(TypedDict, total=False):
    name: str
    labels: dict[str, str]


class EnvVar(TypedDict):
    name: str
    value: str


class VolumeMount(TypedDict, total=False):
    name: str
    mountPath: str
    readOnly: bool


class ClaimSource(TypedDict):
    claimName: str


class SecretSource(TypedDict):
    secretName: str


class Volume(TypedDict, total=False):
    name: str
    persistentVolumeClaim: ClaimSource
    secret: SecretSource


class Resources(TypedDict):
    #: Per extended resource (the device plugin's name), how many devices.
    requests: dict[str, str]
    limits: dict[str, str]


class Container(TypedDict, total=False):
    name: str
    image: str
    command: list[str]
    env: list[EnvVar]
    resources: Resources
    volumeMounts: list[VolumeMount]


class PodSpec(TypedDict):
    restartPolicy: str
    containers: list[Container]
    volumes: list[Volume]


class PodTemplate(TypedDict):
    metadata: Metadata
    spec: PodSpec


class JobSpec(TypedDict, total=False):
    completionMode: str
    completions: int
    parallelism: int
    backoffLimit: int
    backoffLimitPerIndex: int
    template: PodTemplate


class Job(TypedDict):
    apiVersion: str
    kind: str
    metadata: Metadata
    spec: JobSpec


class JobTemplate(TypedDict):
    metadata: Metadata
    spec: JobSpec


class CronJobSpec(TypedDict):
    schedule: str
    timeZone: str
    concurrencyPolicy: str
    startingDeadlineSeconds: int
    jobTemplate: JobTemplate


class CronJob(TypedDict):
    apiVersion: str
    kind: str
    metadata: Metadata
    spec: CronJobSpec
