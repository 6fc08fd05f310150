"""`python -m phase24 minigpt train|sample|parity|speed`."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from .config import PRESETS, TINY, TINY_TRAIN, TrainConfig

BACKENDS = ("numpy-cpu", "torch-cpu", "torch-cuda")


class InputError(Exception):
    """A mistake in the command's input; the message is the one line the command prints."""


def _model_args(p: argparse.ArgumentParser, preset: str) -> None:
    p.add_argument("--preset", choices=sorted(PRESETS), default=preset, help=f"model size (default {preset})")
    for name in ("n_layer", "n_head", "n_embd", "block_size"):
        p.add_argument("--" + name.replace("_", "-"), type=int, help="override the preset")
    p.add_argument("--batch-size", type=int)


def _configs(a):
    cfg = PRESETS[a.preset]
    over = {k: getattr(a, k) for k in ("n_layer", "n_head", "n_embd", "block_size") if getattr(a, k, None)}
    try:
        cfg = dataclasses.replace(cfg, **over)
    except ValueError as err:
        raise InputError(str(err)) from None
    tc = TINY_TRAIN if a.preset == "tiny" else TrainConfig()
    if getattr(a, "batch_size", None):
        tc = dataclasses.replace(tc, batch_size=a.batch_size)
    if getattr(a, "lr", None):
        tc = dataclasses.replace(tc, lr=a.lr)
    if getattr(a, "seed", None) is not None:
        tc = dataclasses.replace(tc, seed=a.seed)
    return cfg, tc


def add_parser(subparsers) -> argparse.ArgumentParser:
    mg = subparsers.add_parser("minigpt", help="NumPy MiniGPT, its PyTorch port, parity and speed",
                               description="A byte-level GPT in NumPy and in PyTorch, trained on the chapter's "
                                           "own text (shipped in the package; nothing is downloaded).")
    sub = mg.add_subparsers(dest="minigpt_command", required=True)

    t = sub.add_parser("train", help="train from scratch or from a checkpoint; writes an .npz checkpoint")
    t.add_argument("--impl", choices=["numpy", "torch"], default="numpy")
    t.add_argument("--device", default="cpu", help="cpu or cuda (torch only)")
    t.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    t.add_argument("--steps", type=int, default=300)
    t.add_argument("--lr", type=float)
    t.add_argument("--seed", type=int, help="seed of the initial weights")
    t.add_argument("--init", help="checkpoint to continue from (written by either implementation)")
    t.add_argument("--out", help="checkpoint to write (default out/minigpt/<impl>.npz)")
    t.add_argument("--log-every", type=int, default=50)
    t.add_argument("--corpus", help="another UTF-8 text file (default: the shipped corpus.txt)")
    t.add_argument("--no-progress", action="store_true")
    _model_args(t, "small")

    s = sub.add_parser("sample", help="generate text from a checkpoint")
    s.add_argument("--ckpt", help="a checkpoint written by `minigpt train` (required)")
    s.add_argument("--impl", choices=["numpy", "torch"], default="numpy")
    s.add_argument("--device", default="cpu")
    s.add_argument("--prompt", default="The GPU ")
    s.add_argument("-n", "--num-bytes", type=int, default=300)
    s.add_argument("--temperature", type=float, default=0.8, help="0 = greedy")
    s.add_argument("--top-k", type=int)
    s.add_argument("--seed", type=int, default=0)

    p = sub.add_parser("parity", help="float64 NumPy <-> PyTorch parity report (idiomatic and exact)")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--exact-steps", type=int, default=100)
    p.add_argument("--no-exact", action="store_true", help="skip the bit-exact mode")
    p.add_argument("--file", help="grade your own part of the port (labs/starters/my_port.py) against "
                                  "the NumPy model; it runs the file's code, with your rights")
    _model_args(p, "tiny")

    sp = sub.add_parser("speed", help="training tokens/s: numpy-cpu, torch-cpu, torch-cuda")
    sp.add_argument("--dtype", choices=["float64", "float32"], default="float32")
    sp.add_argument("--steps", type=int, default=20, help="timed steps on the CPU")
    sp.add_argument("--gpu-steps", type=int, default=200, help="timed steps on the GPU")
    sp.add_argument("--backends", default=",".join(BACKENDS))
    sp.add_argument("--json", help="write the figures to this JSON file")
    sp.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    _model_args(sp, "small")
    return mg


def _with_defaults(args):
    """Fill the options a caller left out (e.g. Namespace(minigpt_command="parity")) with their defaults."""
    cmd = args.minigpt_command
    if cmd == "sample":
        return args
    ap = argparse.ArgumentParser()
    add_parser(ap.add_subparsers(dest="command"))
    full = ap.parse_args(["minigpt", cmd])
    vars(full).update({k: v for k, v in vars(args).items() if v is not None or not hasattr(full, k)})
    return full


def check_device(device: str, impl: str = "torch") -> None:
    """InputError, in words, for a device this command cannot use on this machine."""
    if impl == "numpy":
        if device != "cpu":
            raise InputError(f"--device {device}: the NumPy model runs on the CPU only "
                             "(--impl torch runs on a GPU)")
        return
    import torch

    try:
        dev = torch.device(device)
    except RuntimeError:
        raise InputError(f"--device {device}: not a device (cpu, cuda or cuda:N)") from None
    if dev.type == "cpu":
        return
    if dev.type != "cuda":
        raise InputError(f"--device {device}: the lab runs on cpu or cuda")
    if not torch.cuda.is_available():
        build = "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
        raise InputError(f"--device {device}: this machine has no CUDA GPU that torch can use "
                         f"(torch {torch.__version__}, {build}); run with --device cpu")
    if dev.index is not None and dev.index >= torch.cuda.device_count():
        raise InputError(f"--device {device}: this machine has {torch.cuda.device_count()} GPU(s), "
                         "numbered from 0")


def _check_inputs(args) -> None:
    cmd = args.minigpt_command
    if cmd == "sample" and not args.ckpt:
        raise InputError("--ckpt FILE is required: a checkpoint that `minigpt train` wrote "
                         "(by default out/minigpt/numpy.npz or out/minigpt/torch.npz)")
    for opt in ("ckpt", "init", "corpus"):  # --file: the grader says it, as check does
        value = getattr(args, opt, None)
        if value and not Path(value).is_file():
            made = " (`minigpt train --out FILE` writes one)" if opt in ("ckpt", "init") else ""
            raise InputError(f"--{opt} {value}: no such file{made}")
    if cmd in ("train", "sample"):
        check_device(args.device, args.impl)
    for name in ("steps", "num_bytes", "exact_steps", "batch_size", "n_layer", "n_head",
                 "n_embd", "block_size"):
        value = getattr(args, name, None)
        if value is not None and (value < 0 or (value == 0 and name not in ("steps", "num_bytes",
                                                                               "exact_steps"))):
            raise InputError(f"--{name.replace('_', '-')} {value}: must be "
                             f"{'>= 0' if name in ('steps', 'num_bytes', 'exact_steps') else '>= 1'}")
    if cmd == "speed":
        bad = [b for b in args.backends.split(",") if b not in BACKENDS]
        if bad:
            raise InputError(f"--backends: {', '.join(bad)} is not one of {', '.join(BACKENDS)}")


def run(args) -> int:
    """The command; a mistake in its input is one line on stderr and exit status 2."""
    args = _with_defaults(args)
    try:
        _check_inputs(args)
        return _run(args)
    except InputError as err:
        print(f"minigpt {args.minigpt_command}: {err}", file=sys.stderr, flush=True)
        return 2


def _run(args) -> int:
    from .checkpoint import CheckpointError

    try:
        return _command(args)
    except CheckpointError as err:
        raise InputError(str(err)) from None


def _command(args) -> int:
    cmd = args.minigpt_command
    if cmd == "train":
        from .train import train

        cfg, tc = _configs(args)
        out = args.out or f"out/minigpt/{args.impl}.npz"
        train(args.impl, None if args.init else cfg, None if args.init else tc, args.steps, args.device,
              args.dtype, args.init, out, args.log_every, progress=not args.no_progress, corpus=args.corpus)
        return 0
    if cmd == "sample":
        from .train import sample

        text = sample(args.ckpt, args.impl, args.prompt, args.num_bytes, args.temperature, args.top_k, args.seed,
                      args.device)
        sys.stdout.write(text.decode("utf-8", errors="replace") + "\n")
        return 0
    if cmd == "parity":
        cfg, tc = _configs(args)
        if args.file:
            from . import port_grade

            return port_grade.main(args.file, cfg, tc, args.steps)
        from .parity import report

        ok = report(cfg, tc, args.steps, args.exact_steps, not args.no_exact)
        return 0 if ok else 1
    if cmd == "speed":
        from .speed import speed

        cfg, tc = _configs(args)
        if args.threads:
            import torch

            torch.set_num_threads(args.threads)
        speed(cfg, tc, args.dtype, args.steps, args.gpu_steps, backends=args.backends.split(","),
              json_path=args.json)
        return 0
    raise SystemExit(f"unknown minigpt command {cmd!r}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m phase24.minigpt")
    add_parser(ap.add_subparsers(dest="command", required=True))
    return run(ap.parse_args(argv))


__all__ = ["add_parser", "run", "main", "TINY"]
