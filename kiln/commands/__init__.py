"""The modules of the `kiln` subcommands that have none of their own elsewhere in kiln (kiln/cli.py lists every
subcommand's module)."""
