# scripts: the bootstrap script's output hygiene, shell completion and the
# README checks (make docs-check).

# `sh scripts/bootstrap run > out.txt` keeps out.txt to the result. make
# check runs it with stand-in tools (seconds, offline); .ci/run runs it for
# real with --full once the models are fetched.
TESTS += tests/cli/bootstrap.sh
EXTRA_DIST += tests/cli/bootstrap.sh scripts/local.mk
