# Sourced by scripts/demo.sh and scripts/test.sh: `install_once EXTRAS` makes .venv (when it is
# missing) and runs `pip install -e '.[EXTRAS]'` only when that install is not already current:
# a stamp in .venv records pyproject.toml's hash and the extras of each install done, so a rerun
# with nothing changed skips pip (10-40 s on the project's VM) and one after an edit of
# pyproject.toml (a dependency, an entry point) installs again. The package itself is editable:
# code changes never need a reinstall. Delete .venv/.maze-envs-installs to force one.
install_once() {
    local extras="$1" stamp_file=.venv/.maze-envs-installs stamp
    [ -x .venv/bin/python ] || python3 -m venv .venv
    stamp="$(sha256sum pyproject.toml | cut -d' ' -f1) [$extras]"
    if [ -f "$stamp_file" ] && grep -qxF -- "$stamp" "$stamp_file"; then
        return 0
    fi
    .venv/bin/python -m pip install -q -e ".[$extras]"
    echo "$stamp" >> "$stamp_file"
}
