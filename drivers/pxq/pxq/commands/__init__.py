"""The driver's commands, one module each, each declaring itself as PLUGIN = plugins.Command(...)
(pxq.core.plugins): its name, help, place in `pxq --help`, `add(parser)`, `handle(args, app_args,
console)`, whether it passes arguments after `--` on, and whether it needs a build (./pxq lists
the ones that do not in RECORD_COMMANDS and starts them at once). A new command is a new module.
Commands never import each other."""
