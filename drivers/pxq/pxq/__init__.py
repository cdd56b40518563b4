"""pxq driver: launches pxq miniapps across pxq layouts, sweeps variants, reads run records."""

__version__ = "0.1.0"
