"""``python -m maze_envs`` runs the ``maze-envs`` command line."""

from maze_envs.cli import main

raise SystemExit(main())
