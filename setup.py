"""Only the C extension lives here; everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        # The C fast path of link detection (enrichment/pipeline/links/detection.py). Optional:
        # without a compiler the install goes on and the pure-Python path is used.
        Extension(
            "enrichment.pipeline.links._linkscan",
            sources=["enrichment/pipeline/links/_linkscan.c"],
            depends=["enrichment/pipeline/links/_linkscan_scan.h"],
            extra_compile_args=["-O2", "-Wall", "-Wextra"],  # `make lint` adds -Werror
            optional=True,
        )
    ]
)
