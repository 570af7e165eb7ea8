#!/usr/bin/env python3
"""Writes the model-shaped suites configs/models/<model>-tp<N>-<phase>.yaml (docs/models.md).

Each benchmark is one part of one transformer layer (a GEMM, the attention, the experts' grouped
GEMM, a tensor-parallel collective) at one scenario (a prefill sequence length, or a decode batch
and cache length), with the tensor-parallel split applied. Its tags say which model, phase,
precision and scenario it belongs to, which part it is and how often it runs per layer, so
`python3 -m genbench_analysis model FILE` can put a layer and the model back together.

    python3 configs/models/generate.py          # rewrite the configs next to this script
    python3 configs/models/generate.py --check  # exit 1 if a config differs from what it writes

The shapes come from the models' published configurations (config.json on their model cards):
see MODELS below and docs/models.md.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Published configurations. hidden: hidden_size; heads / kv_heads: num_attention_heads /
# num_key_value_heads; inter: intermediate_size (dense MLP) or the expert's; layers:
# num_hidden_layers. DeepSeek-V3's MLA fields are its q_lora_rank, kv_lora_rank, qk_nope_head_dim,
# qk_rope_head_dim and v_head_dim.
MODELS = {
    "llama3-8b": dict(hidden=4096, heads=32, kv_heads=8, head_dim=128, inter=14336, layers=32, vocab=128256,
                      tps=[1]),
    "llama3-70b": dict(hidden=8192, heads=64, kv_heads=8, head_dim=128, inter=28672, layers=80, vocab=128256,
                       tps=[1, 2, 4, 8]),
    "mixtral-8x7b": dict(hidden=4096, heads=32, kv_heads=8, head_dim=128, inter=14336, layers=32, vocab=32000,
                         experts=8, top_k=2, tps=[1, 2]),
    "deepseek-v3": dict(hidden=7168, heads=128, layers=61, inter=2048, experts=256, top_k=8, shared_experts=1,
                        vocab=129280, q_lora=1536, kv_lora=512, qk_nope=128, qk_rope=64, v_dim=128, tps=[8]),
}

PREFILL_SEQ = [2048, 8192, 32768]                       # batch 1
TRAIN_SEQ = [2048, 8192]                                # training step of one sequence
# Backward parts no op measures yet: listed in the training layer, so it is reported incomplete
# (missing) until they are, never summed without them. Every part is measured today: the
# pointwise parts' backward (pointwise_backward_parts, step_backward_parts) and the attention's
# (the attention_backward op).
TRAIN_UNMEASURED = []
STEP_UNMEASURED = []
DECODE = [(1, 4096), (1, 131072), (16, 32768), (64, 8192), (256, 4096)]  # (batch, cache)
PRECISIONS = ["bf16", "fp8", "int4"]

GPU_IMPL = {"gemm": "cublaslt", "w4a16": "mma_sm80", "attention": "fa3", "decode": "fa3", "attention_backward": "fa3",
            "grouped_gemm": "cublas_grouped", "collective": "nccl", "overlap": "cuda", "pointwise": "cuda"}
TIMING = "{warmup: 3, min_iterations: 5, max_iterations: 100, min_time: 0.01, max_time: 0.3, target_noise: 0.02}"


def linear(part, m, n, k, precision):
    """A dense linear layer's GEMM, D[m, n] = X[m, k] W^T, in the precision variant."""
    if precision == "int4":
        return part, "w4a16", dict(m=m, n=n, k=k, weights="int4", group=128, dtype="bf16", cache="cold")
    dtype = {"bf16": "bf16", "fp8": "fp8_e4m3"}[precision]
    return part, "gemm", dict(m=m, n=n, k=k, trans_b="t", dtype=dtype, cache="cold")


def dense_parts(name, cfg, tp, tokens, precision):
    """The GEMMs of one layer (not the attention), split by tensor parallelism: column-parallel
    QKV and gate/up (n / tp), row-parallel attention output and down (k / tp)."""
    h = cfg["hidden"]
    out = []
    if "q_lora" in cfg:  # MLA (DeepSeek-V3): low-rank query and key/value projections
        hd_qk = cfg["qk_nope"] + cfg["qk_rope"]
        out.append(linear("qkv_a", tokens, cfg["q_lora"] + cfg["kv_lora"] + cfg["qk_rope"], h, precision))
        out.append(linear("q_b", tokens, cfg["heads"] * hd_qk // tp, cfg["q_lora"], precision))
        out.append(linear("kv_b", tokens, cfg["heads"] * (cfg["qk_nope"] + cfg["v_dim"]) // tp, cfg["kv_lora"],
                          precision))
        out.append(linear("o", tokens, h, cfg["heads"] * cfg["v_dim"] // tp, precision))
    else:
        d = cfg["head_dim"]
        out.append(linear("qkv", tokens, (cfg["heads"] + 2 * cfg["kv_heads"]) * d // tp, h, precision))
        out.append(linear("o", tokens, h, cfg["heads"] * d // tp, precision))
    if "experts" in cfg:
        out.append(linear("router", tokens, cfg["experts"], h, precision if precision != "int4" else "bf16"))
        if cfg.get("shared_experts"):
            inter = cfg["inter"] * cfg["shared_experts"]
            out.append(linear("shared_gate_up", tokens, 2 * inter // tp, h, precision))
            out.append(linear("shared_down", tokens, h, inter // tp, precision))
    else:
        out.append(linear("gate_up", tokens, 2 * cfg["inter"] // tp, h, precision))
        out.append(linear("down", tokens, h, cfg["inter"] // tp, precision))
    return out


def expert_parts(cfg, tp, tokens):
    """The routed experts' GEMMs (bf16 only: no fp8 or int4 grouped GEMM op exists)."""
    e, top_k, inter, h = cfg["experts"], cfg["top_k"], cfg["inter"], cfg["hidden"]
    common = dict(groups=e, top_k=top_k, tokens=tokens, dtype="bf16")
    return [("experts_gate_up", "grouped_gemm", dict(common, n=2 * inter // tp, k=h)),
            ("experts_down", "grouped_gemm", dict(common, n=h, k=inter // tp))]


def pointwise_parts(cfg, tp, tokens):
    """The memory-bound parts of one layer (pointwise op, bf16 in every precision variant): the
    residual add fused with the norm before attention and before the MLP (count 2), rotary
    embedding of Q and K, SiLU x up of the MLP (of the routed experts' rows and the shared
    expert's in MoE), and MLA's norms of its low-rank query and latent."""
    h = cfg["hidden"]
    out = [("add_rmsnorm", dict(kind="add_rmsnorm", rows=tokens, hidden=h, dtype="bf16"), 2)]
    if "q_lora" in cfg:
        out.append(("q_norm", dict(kind="rmsnorm", rows=tokens, hidden=cfg["q_lora"], dtype="bf16"), 1))
        out.append(("kv_norm", dict(kind="rmsnorm", rows=tokens, hidden=cfg["kv_lora"], dtype="bf16"), 1))
        rope = dict(heads=cfg["heads"] // tp, heads_kv=1, head_dim=cfg["qk_rope"])  # the shared k_pe
    else:
        rope = dict(heads=cfg["heads"] // tp, heads_kv=max(1, cfg["kv_heads"] // tp), head_dim=cfg["head_dim"])
    out.append(("rope", dict(kind="rope", rows=tokens, **rope, dtype="bf16"), 1))
    if "experts" in cfg:
        out.append(("experts_silu_mul", dict(kind="silu_mul", rows=tokens * cfg["top_k"], hidden=cfg["inter"] // tp,
                                             dtype="bf16"), 1))
        if cfg.get("shared_experts"):
            out.append(("shared_silu_mul", dict(kind="silu_mul", rows=tokens,
                                                hidden=cfg["inter"] * cfg["shared_experts"] // tp, dtype="bf16"), 1))
    else:
        out.append(("silu_mul", dict(kind="silu_mul", rows=tokens, hidden=cfg["inter"] // tp, dtype="bf16"), 1))
    return out


def pointwise_backward_parts(cfg, tp, tokens):
    """The backward of the layer's memory-bound parts in training (bf16), each at its
    forward part's shape (pointwise_parts): the two add_rmsnorms' backward (the residual stream's
    gradient added in, count 2), rope's inverse rotation of dQ and dK, SiLU x up's backward."""
    return [(f"{part}_backward", dict(axes, kind=f"{axes['kind']}_backward"), count)
            for part, axes, count in pointwise_parts(cfg, tp, tokens)]


def step_backward_parts(cfg, tp, tokens):
    """The backward of the pointwise parts that run once a step: the embedding's scatter-add of
    every token's gradient into the (fp32) table of the whole vocabulary, the final norm's
    backward (rmsnorm_backward: no residual add)."""
    h, v = cfg["hidden"], cfg["vocab"]
    return [("embedding_backward", dict(kind="embedding_backward", rows=tokens, hidden=h, vocab=v, dtype="bf16")),
            ("final_norm_backward", dict(kind="rmsnorm_backward", rows=tokens, hidden=h, dtype="bf16"))]


def step_parts(cfg, tp, tokens, logits):
    """Parts that run once a step, not once a layer (tag per: step): the embedding gather, the
    final norm, and the LM head (vocab-parallel: n = vocab / TP) on the `logits` rows that are
    sampled (the last token of each sequence), bf16 in every variant."""
    h, v = cfg["hidden"], cfg["vocab"]
    return [("embedding", "pointwise", dict(kind="embedding", rows=tokens, hidden=h, vocab=v, dtype="bf16")),
            ("final_norm", "pointwise", dict(kind="rmsnorm", rows=tokens, hidden=h, dtype="bf16")),
            ("lm_head", "gemm", dict(m=logits, n=v // tp, k=h, trans_b="t", dtype="bf16", cache="cold"))]


def attention_part(cfg, tp, seq, backward=False):
    """MLA prefill (DeepSeek-V3) is multi-head attention with Q/K of qk_nope + qk_rope (192) and
    V of v_dim (128); its backward, which takes one head dim, has the stand-in of head_dim 128
    (docs/models.md)."""
    dims = {}
    if "q_lora" in cfg:
        heads, kv = cfg["heads"] // tp, cfg["heads"] // tp
        dims = dict(head_dim=128) if backward else dict(head_dim=cfg["qk_nope"] + cfg["qk_rope"],
                                                        head_dim_v=cfg["v_dim"])
    else:
        heads, kv = cfg["heads"] // tp, max(1, cfg["kv_heads"] // tp)
        dims = dict(head_dim=cfg["head_dim"])
    return "attention", "attention", dict(batch=1, seqlen_q=seq, heads=heads, heads_kv=kv, **dims,
                                          causal="true", dtype="bf16")


def decode_part(cfg, tp, batch, cache):
    if "q_lora" in cfg:  # MLA's absorbed decode reads one latent (576 values) a key: 1 KV head of 256
        heads, kv, d = cfg["heads"] // tp, 1, 256
    else:
        heads, kv, d = cfg["heads"] // tp, max(1, cfg["kv_heads"] // tp), cfg["head_dim"]
    return "attention", "decode", dict(batch=batch, heads=heads, heads_kv=kv, head_dim=d, cache=cache,
                                       page_size=64, dtype="bf16", kv_dtype="same")


def trains(cfg):
    """Whether the prefill suite has a training phase: every model's. MoE models train their
    routed experts through expert_backward_parts; DeepSeek-V3's MLA attention backward is a
    stand-in (multi-head attention over head_dim 128, attention_part)."""
    return True


def backward_gemms(cfg, tp, tokens):
    """Each linear's dgrad and wgrad for Y[m, n] = X[m, k] W[n, k]^T: dX = dY W (m x k over n,
    W not transposed) and dW = dY^T X (n x k over m, dY transposed), bf16."""
    out = []
    for part, _, fwd in dense_parts("", cfg, tp, tokens, "bf16"):
        m, n, k = fwd["m"], fwd["n"], fwd["k"]
        out.append((f"{part}_dgrad", dict(m=m, n=k, k=n, trans_b="n", dtype="bf16", cache="cold")))
        out.append((f"{part}_wgrad", dict(m=n, n=k, k=m, trans_a="t", dtype="bf16", cache="cold")))
    return out


def expert_backward_parts(cfg, tp, tokens):
    """The routed experts' backward (bf16), from the forward's grouped GEMMs (expert_parts):
    dgrad dX_e = dY_e W_e is a grouped GEMM on the same routing with n and k swapped (same FLOPs
    and bytes; the grouped_gemm op keeps its one weight layout), and wgrad dW_e = dY_e^T X_e has
    each expert's row count as its reduction, which the grouped_gemm op cannot express: it is
    measured as one expert's GEMM at the balanced row count (tokens x top_k / experts, rounded
    up), counted once per expert, as a loop over the experts runs it."""
    out = []
    e, top_k = cfg["experts"], cfg["top_k"]
    rows = max(1, -(-tokens * top_k // e))
    for part, op, axes in expert_parts(cfg, tp, tokens):
        n, k = axes["n"], axes["k"]
        out.append((f"{part}_dgrad", "grouped_gemm", dict(axes, n=k, k=n), 1))
        out.append((f"{part}_wgrad", "gemm", dict(m=n, n=k, k=rows, trans_a="t", dtype="bf16", cache="cold"), e))
    return out


def params_per_card(cfg, tp):
    """Parameters that are GEMM weights a token passes through, this card's shard under TP: the
    layers' projections, in MoE the top_k routed experts' (active parameters, the usual convention
    for a mixture of experts' model FLOPs), and the LM head (the embedding table is gathered, not
    multiplied)."""
    layer = sum(a["n"] * a["k"] for _, _, a in dense_parts("", cfg, tp, 1, "bf16"))
    if "experts" in cfg:
        layer += cfg["top_k"] * sum(a["n"] * a["k"] for _, _, a in expert_parts(cfg, tp, 1))
    return cfg["layers"] * layer + cfg["vocab"] // tp * cfg["hidden"]


def train_parts(cfg, tp):
    names = [p for p, _, _ in dense_parts("", cfg, tp, 1, "bf16")] + ["attention"]
    if "experts" in cfg:
        names += [p for p, _, _ in expert_parts(cfg, tp, 1)]
    names += [p for p, _, _ in pointwise_parts(cfg, tp, 1)]
    if tp > 1:
        names += ["all_reduce", "all_reduce_backward"]
    names += [p for p, _ in backward_gemms(cfg, tp, 1)] + [p for p, _, _ in pointwise_backward_parts(cfg, tp, 1)]
    if "experts" in cfg:
        names += [p for p, _, _, _ in expert_backward_parts(cfg, tp, 1)]
    names += ["attention_backward"] + [p for p, _ in TRAIN_UNMEASURED]
    names += [p for p, _, _ in step_parts(cfg, tp, 1, 1)] + ["lm_head_dgrad", "lm_head_wgrad"]
    names += [p for p, _ in step_backward_parts(cfg, tp, 1)] + STEP_UNMEASURED
    return _chunked(names)


def _chunked(names):
    # tag values hold 64 characters: the list continues in layer_parts_2, _3, ...
    chunks, cur = [], ""
    for n in names:
        if cur and len(cur) + 1 + len(n) > 64:
            chunks.append(cur)
            cur = n
        else:
            cur = f"{cur}+{n}" if cur else n
    chunks.append(cur)
    return {("layer_parts" if i == 0 else f"layer_parts_{i + 1}"): c for i, c in enumerate(chunks)}


def expected_parts(cfg, tp, phase):
    names = [p for p, _, _ in dense_parts("", cfg, tp, 1, "bf16")] + ["attention"]
    if "experts" in cfg:
        names += ["experts_gate_up", "experts_down"]
    names += [p for p, _, _ in pointwise_parts(cfg, tp, 1)]
    if tp > 1:
        names.append("all_reduce")
    names += [p for p, _, _ in step_parts(cfg, tp, 1, 1)]
    return _chunked(names)


def fmt(v):
    return str(v)


def bench_yaml(name, op, impl, axes, tags):
    lines = [f"  - name: {name}", f"    op: {op}", f"    implementations: [{impl}]"]
    lines.append("    tags: {" + ", ".join(f"{k}: {fmt(v)}" for k, v in tags.items()) + "}")
    lines.append("    axes: {" + ", ".join(f"{k}: {fmt(v)}" for k, v in axes.items()) + "}")
    return "\n".join(lines)


def suite(model, cfg, tp, phase):
    benches = []
    parts = expected_parts(cfg, tp, phase)
    base = dict(model=model, phase=phase, tp=tp, layers=cfg["layers"])

    train = phase == "prefill" and trains(cfg)

    def add(part, op, axes, scen, precision=None, count=1, extra=None, shared=None):
        """shared: the part serves the training layer too (phase prefill+train) where the scenario
        is one of TRAIN_SEQ and the precision bf16 or none; "train": the training layer only."""
        tags = dict(base)
        in_train = train and scen.get("seq") in TRAIN_SEQ and precision in (None, "bf16")
        if shared == "train":
            tags["phase"] = "train"
        elif shared and in_train:
            tags["phase"] = "prefill+train"
        if precision:
            tags["precision"] = precision
        tags.update(scen)
        tags.update(part=part, count=count)
        tags.update(train_parts(cfg, tp) if shared == "train" else parts)
        if shared == "train":  # the training step's model FLOPs: 6 x params x tokens
            tags["params"] = params_per_card(cfg, tp)
        tags.update(extra or {})
        label = "-".join((["train"] if shared == "train" else []) + [part.replace("_", "-")]
                         + ([precision] if precision else []) + [f"{k}{v}" for k, v in scen.items() if k != "tokens"])
        benches.append(bench_yaml(label, op, GPU_IMPL[op], axes, tags))

    if phase == "prefill":
        scenarios = [(dict(seq=s, tokens=s), s, None) for s in PREFILL_SEQ]
    else:
        scenarios = [(dict(batch=b, tokens=b), b, None) for b in sorted({b for b, _ in DECODE})]
    h = cfg["hidden"]
    for scen, tokens, _ in scenarios:
        for precision in PRECISIONS:
            for part, op, axes in dense_parts(model, cfg, tp, tokens, precision):
                add(part, op, axes, scen, precision, shared=True)
        if "experts" in cfg:
            for part, op, axes in expert_parts(cfg, tp, tokens):
                add(part, op, axes, scen, "bf16", shared=True)
        for part, axes, count in pointwise_parts(cfg, tp, tokens):
            add(part, "pointwise", axes, scen, count=count, shared=True)
        # prefill: one sequence, whose last token is sampled; decode: every sequence's new token
        for part, op, axes in step_parts(cfg, tp, tokens, 1 if phase == "prefill" else tokens):
            add(part, op, axes, scen, extra=dict(per="step"), shared=part != "lm_head")
        if tp > 1:
            # needs the TP degree's ranks: on fewer, the analysis reports it missing with its bytes
            add("all_reduce", "collective", dict(collective="all_reduce", bytes=tokens * h * 2, dtype="bf16"),
                scen, count=2, extra=dict(ranks=tp), shared=True)
        if phase == "prefill":
            add(*attention_part(cfg, tp, tokens), scen, shared=True)
        if train and tokens in TRAIN_SEQ:
            # the training step: every token's logits (the LM head on all rows), each GEMM's dgrad
            # and wgrad, the pointwise parts' backward, and under TP the backward pass's two
            # all_reduces of the activations' grads
            for part, op, axes in step_parts(cfg, tp, tokens, tokens):
                if part == "lm_head":
                    add(part, op, axes, scen, extra=dict(per="step"), shared="train")
                    m, n, k = axes["m"], axes["n"], axes["k"]
                    add("lm_head_dgrad", "gemm", dict(m=m, n=k, k=n, trans_b="n", dtype="bf16", cache="cold"), scen,
                        "bf16", extra=dict(per="step"), shared="train")
                    add("lm_head_wgrad", "gemm", dict(m=n, n=k, k=m, trans_a="t", dtype="bf16", cache="cold"), scen,
                        "bf16", extra=dict(per="step"), shared="train")
            for part, axes in backward_gemms(cfg, tp, tokens):
                add(part, "gemm", axes, scen, "bf16", shared="train")
            if "experts" in cfg:
                for part, op, axes, count in expert_backward_parts(cfg, tp, tokens):
                    add(part, op, axes, scen, "bf16", count=count, shared="train")
            # the attention's backward (dQ, dK, dV) on the forward's shape
            _, _, att = attention_part(cfg, tp, tokens, backward=True)
            add("attention_backward", "attention_backward", att, scen, shared="train")
            # the backward of the pointwise parts: per layer, and once a step (embedding, final norm)
            for part, axes, count in pointwise_backward_parts(cfg, tp, tokens):
                add(part, "pointwise", axes, scen, count=count, shared="train")
            for part, axes in step_backward_parts(cfg, tp, tokens):
                add(part, "pointwise", axes, scen, extra=dict(per="step"), shared="train")
            if tp > 1:
                add("all_reduce_backward", "collective",
                    dict(collective="all_reduce", bytes=tokens * h * 2, dtype="bf16"), scen, count=2,
                    extra=dict(ranks=tp), shared="train")
            if tp > 1 and "experts" not in cfg:
                # the attention output GEMM and its all_reduce pipelined in 4 pieces, as the
                # overlap op measures them; replaces one o and one all_reduce in the overlapped sum
                _, _, o = linear("o", tokens, h, cfg["heads"] * cfg["head_dim"] // tp, "bf16")
                add("o_all_reduce", "overlap",
                    dict(m=o["m"], n=o["n"], k=o["k"], dtype="bf16", collective="all_reduce",
                         bytes=tokens * h * 2, coll_dtype="bf16", chunks=4),
                    scen, "bf16", extra=dict(replaces="o+all_reduce", time="t_both_s", ranks=tp))
    if phase == "decode":
        for b, c in DECODE:
            add(*decode_part(cfg, tp, b, c), dict(batch=b, cache=c, tokens=b))
    return benches


def header(model, cfg, tp, phase):
    scen = (f"prefill of one sequence of {', '.join(str(s) for s in PREFILL_SEQ)} tokens" if phase == "prefill"
            else "decode steps at (batch, cache) " + ", ".join(f"({b}, {c})" for b, c in DECODE))
    return "\n".join([
        f"# {model}, tensor parallel {tp}, {phase}: the parts of one layer (docs/models.md), {scen}.",
        "# Generated by configs/models/generate.py: edit that, not this file.",
        f"# Run: mpirun -np {tp} genbench run configs/models/{model}-tp{tp}-{phase}.yaml"
        if tp > 1 else f"# Run: genbench run configs/models/{model}-tp{tp}-{phase}.yaml",
        f"# Compose: python3 -m genbench_analysis model results/{model}-tp{tp}-{phase}.h5",
        "genbench: 1",
        "settings:",
        "  backend: cuda",
        f"  output: results/{model}-tp{tp}-{phase}.h5",
        f"  timing: {TIMING}",
        "",
        "benchmarks:",
    ])


class ModelConfigError(Exception):
    pass


def check_model(model, cfg):
    """Raises ModelConfigError naming the model's line in MODELS when its dimensions do not fit
    together: GQA groups, the tensor-parallel splits of heads, MLP width and vocabulary."""
    import inspect
    src = inspect.getsource(sys.modules[__name__]).splitlines()
    line = next((i + 1 for i, text in enumerate(src) if text.strip().startswith(f'"{model}":')), 0)
    where = f"{os.path.basename(__file__)}:{line}: model {model}"
    need = ["hidden", "heads", "layers", "inter", "vocab", "tps"]
    need += ["q_lora", "kv_lora", "qk_nope", "qk_rope", "v_dim"] if "q_lora" in cfg else ["kv_heads", "head_dim"]
    missing = [k for k in need if k not in cfg]
    if missing:
        raise ModelConfigError(f"{where}: missing {', '.join(missing)}")
    if "kv_heads" in cfg and cfg["heads"] % cfg["kv_heads"]:
        raise ModelConfigError(f"{where}: heads {cfg['heads']} is not a multiple of kv_heads {cfg['kv_heads']}")
    for tp in cfg["tps"]:
        for key in ("heads", "inter", "vocab"):
            if cfg[key] % tp:
                raise ModelConfigError(f"{where}: {key} {cfg[key]} does not split over tp {tp}")
        if "kv_heads" in cfg and cfg["kv_heads"] > tp and cfg["kv_heads"] % tp:
            raise ModelConfigError(f"{where}: kv_heads {cfg['kv_heads']} does not split over tp {tp}")


def render():
    out = {}
    for model, cfg in MODELS.items():
        check_model(model, cfg)
        for tp in cfg["tps"]:
            for phase in ("prefill", "decode"):
                text = header(model, cfg, tp, phase) + "\n" + "\n".join(suite(model, cfg, tp, phase)) + "\n"
                out[f"{model}-tp{tp}-{phase}.yaml"] = text
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a written config differs")
    ap.add_argument("--dir", default=HERE)
    args = ap.parse_args()
    try:
        rendered = render()
    except ModelConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    stale = []
    for name, text in rendered.items():
        path = os.path.join(args.dir, name)
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            stale.append(name)
            if not args.check:
                with open(path, "w") as f:
                    f.write(text)
    if args.check and stale:
        print("out of date (run configs/models/generate.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
