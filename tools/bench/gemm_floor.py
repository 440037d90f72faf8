"""The f32 floor of a pass, for compare_pytorch.sh and compare_llama.sh: the pass's GEMM FLOP count
(its benchmark's GEMM_GFLOP counter) over the best f32 GEMM rate bench_gemm_floor measured in the
same run, on the pass's own products and on a 2048³ square. PyTorch calls the same OpenBLAS sgemm,
so no f32 pass of the model, ours or PyTorch's, runs faster on these cores: a target under
floor / PyTorch's time cannot be met in f32."""
import json

SQUARE = (2048, 2048, 2048)


def gemm_rates(floor_json):
    """{(T, K, N): FLOP/s} from bench_gemm_floor's JSON (rate counters are in units per second)."""
    return {tuple(int(v) for v in b["name"].split("/")[1:4]): b["GFLOP/s"]
            for b in json.loads(floor_json)["benchmarks"]}


def floor_seconds(gemm_gflop, products, rates):
    """The floor time and the line that says how it was reached."""
    measured = {shape: rates[shape] / 1e9 for shape in list(products) + [SQUARE]}
    best = max(measured, key=measured.get)
    seconds = gemm_gflop / measured[best]
    shapes = ", ".join(f"{t}x{k}x{n} {rate:.0f}" for (t, k, n), rate in measured.items())
    return seconds, (f"f32 GEMM floor {seconds:.3f} s: {gemm_gflop:.1f} GFLOP of GEMMs at the best "
                     f"sgemm rate measured in this run, {measured[best]:.0f} GFLOP/s "
                     f"(T x K x N GFLOP/s: {shapes})")
