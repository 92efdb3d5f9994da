"""``ckit run --in-container``: the run inside the vendor's reference image, signed on the host.

The key never enters the image: the run inside writes its report unsigned, and the host signs
what came out. Here, above the runner, since the runner never starts an image itself.
"""

from __future__ import annotations

from kit.container.run import run_in_container
from kit.errors import EnvironmentProblem, ExitCode
from kit.report.read import read_report
from kit.rundir import RunDir
from kit.runner.config import RunConfig
from kit.runner.inputs import load_inputs
from kit.runner.outdir import claim_new_out_dir
from kit.runner.session import RunResult, signing_key


def start_run_in_container(config: RunConfig, image: str | None, extra: list[str]) -> RunResult:
    """Run inside the vendor image (no key inside), then sign on the host what came out."""
    inputs = load_inputs(config)
    key = signing_key(config, inputs.vendor.id) if config.sign else None
    claim_new_out_dir(config.out_dir)
    ran = run_in_container(config.vendor, image, config.out_dir, config.tiers, extra)
    # A finished run exits with its grade's code (every grade's, not only 0 and 1) or with
    # partial's: each wrote a report to sign. Any other code wrote none worth signing.
    graded = {grade.exit_code for grade in inputs.standard.grades} | {int(ExitCode.PARTIAL)}
    if ran.exit_code not in graded:
        raise EnvironmentProblem(
            f"the run inside {ran.image} failed with exit code {ran.exit_code} "
            "(its output is above); nothing was signed"
        )
    run_dir = RunDir(config.out_dir)
    # Whichever format the run's standard wrote (report.json or a body), read as strictly as
    # any reader of a report file reads it.
    report = dict(read_report(run_dir.path).report.document)
    if key is None:
        return RunResult(config.out_dir, report, run_dir.envelope)
    from kit.signing.keys import passphrase_from_env
    from kit.signing.sign import sign_output_dir

    envelope = sign_output_dir(config.out_dir, key, passphrase_from_env())
    return RunResult(config.out_dir, report, envelope)
