#!/usr/bin/env bash
# Prints the working tree's state as git sees it (tracked changes with a digest
# of their content, and untracked files that are not ignored). `make test`
# compares it before and after the suites: a test run must leave the tree as
# it found it.
set -euo pipefail
cd "$(dirname "$0")/.."
git status --porcelain=v1 --untracked-files=all
{ git diff HEAD --binary; git ls-files --others --exclude-standard -z | xargs -0r cat; } | sha256sum
