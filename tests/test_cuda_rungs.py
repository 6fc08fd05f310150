"""What each CUDA rung's .cu file compiles is what its configuration table in
phase24/softmax/cuda/configs.py says: the C instance lines and the Python table are written
apart, and this test (the nvcc layer) keeps them equal."""

import pytest
from nvcc_helpers import needs_nvcc

from phase24.bridge.nvcc import compile_cu
from phase24.core.dtypes import TAG
from phase24.softmax.cuda import HOPPER_ONLY, SOURCE_DIR
from phase24.softmax.cuda.configs import FILES, configs, kernel_name


@needs_nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("rung", list(FILES))
def test_the_table_names_every_kernel_of_its_rung(rung):
    """The kernels ptxas reports for a rung's file are exactly the names the table gives: each
    configuration a launcher may choose, for each dtype it is built for; no kernel the launchers
    cannot name, none they would name that is missing."""
    arch = "sm_90a" if FILES[rung] in HOPPER_ONLY else "sm_80"
    compiled = set(compile_cu(SOURCE_DIR / FILES[rung], arch).kernels)
    named = {kernel_name(rung, config, dtype) for dtype in TAG for config in configs(rung, dtype)}
    assert compiled == named, (f"only compiled: {sorted(compiled - named)}; "
                               f"only in the table: {sorted(named - compiled)}")
