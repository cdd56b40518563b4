# A Spack package for pxq, for a checkout of your own (Spack's mirrors hold no pxq):
#   spack repo add packaging/spack
#   spack env create -d spack-env && spack env activate -d spack-env
#   spack develop --path "$PWD" --no-clone pxq@main
#   spack add pxq@main +kokkos && spack install
# (Spack's mirrors are out of pxq's CI's reach: tests/python/test_install.py checks this recipe
# against a stand-in for spack.package; it has not been built by a real Spack.)
# It builds the miniapps, probes, profiler and driver with Spack's MPI, hwloc and Kokkos, and
# installs the tree `cmake --install` gives (PREFIX/bin/pxq, find_package(pxq)).
from spack.package import *


class Pxq(CMakePackage):
    """Hybrid MPI+OpenMP mini-application kit: CG, FT and MG proxies of the NAS Parallel
    Benchmarks and a ring, as flat MPI, MPI+OpenMP or tiled kernels across p x q layouts,
    with communication probes, a message profiler, tile benchmarks and the studies."""

    maintainers("pxq-developers")

    version("main")

    variant("kokkos", default=True, description="Kokkos kernel backend (OpenMP execution space)")
    variant("benchmarks", default=True, description="Google Benchmark tile benchmarks (pxq tune)")
    variant("native", default=False, description="Compile for the build machine's CPU (-march=native)")
    variant("fftw", default=True, description="FFTW as FT's second FFT engine (pxq run ft -- --fft fftw)")
    variant("papi", default=True, description="Hardware counters through PAPI (pxq run --counters)")

    depends_on("cmake@3.18:", type="build")
    depends_on("ninja", type="build")
    for spec in ("c", "cxx", "pkgconfig"):
        depends_on(spec, type="build")
    for spec in ("mpi", "hwloc@2:", "nlohmann-json@3.9:", "cli11@2:"):
        depends_on(spec)
    for spec, variant in (
        ("kokkos@3.4: +openmp", "+kokkos"),
        ("benchmark", "+benchmarks"),
        ("fftw@3", "+fftw"),
        ("papi", "+papi"),
    ):
        depends_on(spec, when=variant)
    depends_on("googletest", type="test")
    # The driver (PREFIX/bin/pxq) and its requirements (drivers/pxq/pyproject.toml).
    for spec in (
        "python@3.10:",
        "py-rich",
        "py-matplotlib",
        "py-jsonschema",
        "py-fastjsonschema",  # the door's quick yes where jsonschema-rs is not packaged
        "py-orjson",
        "py-scipy",
        "py-numpy",
    ):
        depends_on(spec, type="run")
    depends_on("py-tomli", type="run", when="^python@:3.10")  # tomllib before Python 3.11

    generator("ninja")

    def cmake_args(self):
        return [
            self.define_from_variant("PXQ_ENABLE_KOKKOS", "kokkos"),
            self.define_from_variant("PXQ_ENABLE_BENCHMARKS", "benchmarks"),
            self.define_from_variant("PXQ_ENABLE_FFTW", "fftw"),
            self.define_from_variant("PXQ_NATIVE", "native"),
            self.define("PXQ_ENABLE_TESTS", self.run_tests),
        ]

    def setup_run_environment(self, env):
        env.set("PXQ_PYTHON", self.spec["python"].command.path)
