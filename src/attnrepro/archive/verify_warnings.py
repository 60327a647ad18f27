"""What differs between an archive's run and this checkout besides its results: the warnings of
``verify``, which never change its verdict.

- files of the archive that no longer match its ``MANIFEST.sha256`` (or lines naming a file twice);
- its RO-Crate's own warnings (:mod:`attnrepro.archive.verify_crate`);
- its commit, uncommitted changes on either side, its lock and its package versions
  (``environment.json``, or its crate's record of it).

Every file is read within its cap (:mod:`attnrepro.archive.verify_limits`); one that passes it
raises :class:`attnrepro.run.bounded.Exceeded`, which verify turns into its one-line refusal.
"""

from attnrepro import paths
from attnrepro.archive import verify_crate, verify_limits
from attnrepro.run import bounded, digests

REPO = paths.REPO
LOCK = paths.RUNTIME_LOCK
LIMITS = verify_limits.Limits()  # the caps of the files read after extraction


def manifest_mismatches(top, limits=LIMITS):
    """(names, repeated): the files of the archive that are missing or differ from their
    MANIFEST.sha256 line, and how many lines name a file an earlier line named (each file is hashed
    once, however many lines name it). :class:`attnrepro.run.bounded.Exceeded` when the manifest
    holds more than its caps."""
    manifest = top / verify_limits.MANIFEST
    if not manifest.is_file():
        return ["MANIFEST.sha256 (absent)"], 0
    try:
        lines = bounded.read_lines(manifest, limits.manifest_bytes, limits.text_lines)
    except bounded.Exceeded:
        raise
    except (OSError, ValueError):
        return ["MANIFEST.sha256 (unreadable)"], 0
    bad, found = {}, {}  # bad: a dict for its order
    for line in lines:
        digest, _, name = line.partition("  ")
        if name not in found:
            path = verify_crate.file_in(top, name)
            found[name] = digests.file_sha256(path) if path is not None else None
        if found[name] != digest:
            bad[name] = True  # pragma: no mutate (equivalent: only the keys are read)
    return list(bad), len(lines) - len(found)


def _environment(top):
    """The archive's environment.json as a dict, and a warning when it cannot be read (from its
    RO-Crate instead, when it has one: attnrepro.archive.verify_crate)."""
    if (from_crate := verify_crate.environment(top)) is not None:
        return from_crate
    path = top / "environment.json"
    if not path.is_file():
        return {}, []
    try:
        env = bounded.read_json(path, LIMITS.environment_bytes, LIMITS.json_depth)
    except bounded.Exceeded:
        raise
    except (OSError, ValueError) as error:
        env = error  # pragma: no mutate (equivalent: any value but a dict gives the same warning)
    if isinstance(env, dict) and all(isinstance(env.get(k) or {}, dict) for k in ("git", "versions")):
        return env, []
    return {}, ["the archive's environment.json cannot be read: its commit and package versions "
                "are not compared"]


def warnings(top):
    """Sentences on what differs between the archive's run and this checkout, besides results.
    :class:`attnrepro.run.bounded.Exceeded` when a file they are read from passes its cap."""
    from attnrepro.run import provenance

    out = []
    bad, repeated = manifest_mismatches(top)
    if bad:
        out.append(f"{len(bad)} file(s) of the archive do not match its MANIFEST.sha256 "
                   f"(changed after it was written): {', '.join(bad[:3])}")
    if repeated:
        out.append(f"{repeated} line(s) of its MANIFEST.sha256 name a file that an earlier line names")
    out += verify_crate.warnings(top)
    env, unreadable = _environment(top)
    out += unreadable
    theirs, ours = (env.get("git") or {}), provenance.git_state(REPO)
    if theirs.get("commit") != ours["commit"]:
        out.append(f"the archive's commit ({theirs.get('commit') or 'not recorded'}) is not this checkout's "
                   f"HEAD ({ours['commit'] or 'not a git checkout'})")
    for side, state in (("the archive's run", theirs), ("this checkout", ours)):
        if state.get("dirty"):
            out.append(f"{side} had uncommitted changes to tracked files")
    out += _lock_warnings(top)
    versions = provenance.package_versions()
    changed = [f"{k} {v} here {versions.get(k)}" for k, v in (env.get("versions") or {}).items()
               if k in versions and versions[k] != v]
    if changed:
        out.append("package versions differ: archive " + "; ".join(changed))
    return out


def _lock_warnings(top):
    theirs, ours = verify_crate.path(top, "lock") or top / LOCK, REPO / LOCK
    if not theirs.is_file():
        return [f"the archive holds no {LOCK}: the locks are not compared"]
    if not ours.is_file():
        return [f"this checkout has no {LOCK}: the locks are not compared"]
    try:
        a = bounded.read_lines(theirs, LIMITS.lock_bytes, LIMITS.text_lines, name=LOCK)
        b = ours.read_text().splitlines()
    except bounded.Exceeded:
        raise
    except (OSError, ValueError) as error:
        return [f"a {LOCK} cannot be read ({type(error).__name__}): the locks are not compared"]
    if a == b:
        return []
    set_a, set_b = set(a), set(b)  # linear: a line looked up in a set, not in the other list
    only_a, only_b = [x for x in a if x not in set_b], [x for x in b if x not in set_a]
    return [f"{LOCK} differs: archive {only_a[:3]}, here {only_b[:3]}"]
