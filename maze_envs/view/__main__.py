"""``python -m maze_envs.view JOURNAL [--game N] [--out FILE]``."""

import sys

from maze_envs.view.cli import main

raise SystemExit(main(sys.argv[1:]))
