"""The modules of tools/golden that the zoo model shares with the variant goldens (the safetensors
reader and writer, and variant_reference: sparse masks, priors, SplitMix64), imported once here.
Why here: importing variant_reference sets float64 as torch's default dtype, and the zoo model
trains in float32, so the caller's default is put back after the import."""
import os
import sys

import torch

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden"))
_default_dtype = torch.get_default_dtype()
import safetensors_io  # noqa: E402
import variant_reference as VR  # noqa: E402  (sets float64 as the default dtype on import)

torch.set_default_dtype(_default_dtype)
