"""The claims file of a job (``--published``), loaded first: one it refuses ends the job in one line.

Its own module, imported by the entries of the commands that read the claims (attnrepro.jobs): an
entry that reads none (the archive, machine-speed) does not run the claims' code.
"""

from attnrepro.run import usage


def check(path):
    """Load the claims file ``path`` (--published) as the command will (claims.load_claims), so that
    one it refuses ends the job with a UsageError: one line naming the file, the claim and the key.
    The loader says a bad file with a ValueError (the schema; a key given twice, an anchor, a tag:
    attnrepro.dag.yamlfile.Refused), YAML's error, or the file system's."""
    import yaml

    from attnrepro.report.ledger import claims  # loads NumPy: after the pin

    try:
        claims.load_claims(path)
    except yaml.YAMLError as error:
        raise usage.UsageError(f"{path}: not valid YAML: {usage.yaml_problem(error)}") from None
    except OSError as error:
        raise usage.UsageError(f"--published {path}: {error.strerror or error}") from None
    except ValueError as error:  # the file's problems, by file and key (or line)
        message = usage.one_line(error)
        raise usage.UsageError(message if str(path) in message else f"{path}: {message}") from None
