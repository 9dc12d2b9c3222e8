"""Runs inside the JoeyNMT 2.3.0 environment (started by bench.joeynmt_compare).

Why hooks instead of parsing logs: JoeyNMT's own timers already exclude validation, and its
`_log_scores` / `_validate` methods are the natural places to read them. Wrapping them lets this
script record exactly what JoeyNMT measured (target tokens per second between two log lines,
training seconds excluding validation) and stop training at a BLEU target or a time cap, while
JoeyNMT's training loop itself runs unmodified.

BLEU is the course's definition: hypotheses (JoeyNMT's space-joined tokens) -> lib.data.
detokenize -> sacrebleu against all references (lib.evaluate.sacrebleu_score). `lib` is
imported from the repository (run from its root), which needs only torch and sacrebleu.

    python -m bench.joeynmt_worker throughput CONFIG [--warmup 10]
    python -m bench.joeynmt_worker train CONFIG --refs test_refs.json --minutes 12 --target 20
    python -m bench.joeynmt_worker decode CONFIG --ckpt latest.ckpt --refs test_refs.json

The last line printed is a JSON object.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import time
from pathlib import Path

import joeynmt.builders
import torch
from joeynmt.config import load_config, parse_global_args
from joeynmt.data import load_data
from joeynmt.encoders import RecurrentEncoder
from joeynmt.helpers import make_model_dir
from joeynmt.helpers_for_ddp import get_logger
from joeynmt.prediction import predict, prepare
from joeynmt.training import TrainManager, train
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from lib.data import detokenize
from lib.evaluate import sacrebleu_score

_bidirectional_forward = RecurrentEncoder.forward


def _forward(self, src_embed, src_length, mask, **kwargs):
    """JoeyNMT 2.3.0's RecurrentEncoder.forward with `bidirectional: False` fixed.

    The original always reads the backward direction's final state (`hidden_layerwise[-1:, 1]`)
    and fails with an IndexError for a unidirectional encoder, which only the "matched" recipe
    uses (the "authors" recipe's encoder is bidirectional and runs JoeyNMT's method untouched).
    Same steps as the original; a unidirectional encoder returns the last layer's final state.
    """
    if self.rnn.bidirectional:
        return _bidirectional_forward(self, src_embed, src_length, mask, **kwargs)
    self._check_shapes_input_forward(src_embed=src_embed, src_length=src_length, mask=mask)
    total_length = src_embed.size(1)
    packed = pack_padded_sequence(self.emb_dropout(src_embed), src_length.cpu(),
                                  batch_first=True)
    output, hidden = self.rnn(packed)
    if isinstance(hidden, tuple):  # LSTM: (hidden, memory cell)
        hidden = hidden[0]
    output, _ = pad_packed_sequence(output, batch_first=True, total_length=total_length)
    return output, hidden[-1]


RecurrentEncoder.forward = _forward


class _Plateau(torch.optim.lr_scheduler.ReduceLROnPlateau):
    """torch's ReduceLROnPlateau without `verbose`, which joeynmt 2.3.0 passes (always False)
    and torch 2.13 no longer accepts (TypeError): its plateau scheduling works unchanged."""

    def __init__(self, optimizer, verbose: bool = False, **kwargs):
        super().__init__(optimizer, **kwargs)


joeynmt.builders.ReduceLROnPlateau = _Plateau


def course_bleu(hypotheses: list[str], refs: list[list[str]]) -> float:
    return sacrebleu_score([detokenize(h.split()) for h in hypotheses], refs).score


def _start(cfg_path: str) -> dict:
    cfg = load_config(Path(cfg_path))
    make_model_dir(Path(cfg["model_dir"]), overwrite=True)
    get_logger("", log_file=str(Path(cfg["model_dir"]) / "train.log"))
    logging.getLogger("").setLevel(logging.WARNING)  # keep stdout for the JSON line
    return cfg


def _params(model) -> int:
    return sum(p.numel() for p in model.parameters())


def _log_entry(manager, start_tokens, start_correct, batch_loss) -> dict:
    """What JoeyNMT's own log line says: the step, the last batch's loss per target token
    (normalization "tokens"), the token accuracy since the previous line, the learning rate."""
    stats = manager.stats
    return {"step": stats.steps, "loss": float(batch_loss),
            "acc": (stats.total_correct - start_correct) / max(1, stats.total_tokens
                                                                - start_tokens),
            "lr": manager.optimizer.param_groups[0]["lr"]}


def throughput(args) -> dict:
    """Target tokens/s as JoeyNMT measures it, over the log intervals after `warmup` steps."""
    cfg = _start(args.config)
    intervals, logs, info = [], [], {}
    log_scores = TrainManager._log_scores

    def hooked(self, epoch_no, elapsed_time, start_tokens, start_correct, total_batch_loss):
        info["params"] = _params(self.model)
        intervals.append((self.stats.steps, self.stats.total_tokens - start_tokens,
                          elapsed_time))
        logs.append(_log_entry(self, start_tokens, start_correct, total_batch_loss))
        return log_scores(self, epoch_no, elapsed_time, start_tokens, start_correct,
                          total_batch_loss)

    TrainManager._log_scores = hooked
    train(rank=0, world_size=1, cfg=cfg, skip_test=True)
    timed = [(s, n, t) for s, n, t in intervals if s > args.warmup]
    tokens, seconds = sum(n for _, n, _ in timed), sum(t for _, _, t in timed)
    return {"tokens_per_s": tokens / seconds, "steps": timed[-1][0] - args.warmup,
            "tokens": tokens, "seconds": seconds, "params": info["params"], "log": logs,
            "threads": torch.get_num_threads()}


class _Stop(Exception):
    pass


def train_to_bleu(args) -> dict:
    """Train, score the test set at every validation, stop at the target or the cap.

    JoeyNMT validates on the config's dev set (our validation split) and its plateau scheduler
    and checkpoints follow that; the test set is decoded beside it (greedy, as JoeyNMT
    validates), so no training decision sees the test set.
    """
    cfg = _start(args.config)
    refs = json.loads(Path(args.refs).read_text(encoding="utf-8"))
    evals, logs, state = [], [], {}
    validate, train_and_validate = TrainManager._validate, TrainManager.train_and_validate

    log_scores = TrainManager._log_scores

    def hooked_tv(self, train_data, valid_data):
        # train() has parsed cfg by now (special symbols included): load the test set alike.
        test_data = load_data(cfg["data"], datasets=["test"])[4]
        state.update(start=time.perf_counter(), eval_s=0.0, params=_params(self.model),
                     valid_data=valid_data, test_data=test_data)
        return train_and_validate(self, train_data, valid_data)

    def hooked_log(self, epoch_no, elapsed_time, start_tokens, start_correct,
                   total_batch_loss):  # records JoeyNMT's log line; checks the cap
        log_scores(self, epoch_no, elapsed_time, start_tokens, start_correct, total_batch_loss)
        logs.append(_log_entry(self, start_tokens, start_correct, total_batch_loss))
        train_s = time.perf_counter() - state["start"] - state["eval_s"]
        if train_s >= args.minutes * 60 and not self.stats.is_max_update:
            self._validate(state["valid_data"])  # score the model as it is at the cap

    def hooked_validate(self, valid_data):
        if evals and evals[-1]["step"] == self.stats.steps:
            return  # already scored at this step (the cap fell on a validation step)
        t0 = time.perf_counter()
        train_s = t0 - state["start"] - state["eval_s"]
        validate(self, valid_data)  # JoeyNMT's own: dev set, scheduler, checkpoints
        hyps = predict(model=self.model, data=state["test_data"], device=self.device,
                       n_gpu=self.n_gpu, rank=0, compute_loss=False,
                       normalization=self.args.normalization, args=self.dev_cfg,
                       autocast=self.autocast)[2]
        bleu = course_bleu(hyps, refs)
        evals.append({"step": self.stats.steps, "train_seconds": train_s, "bleu": bleu,
                      "tokens": self.stats.total_tokens,
                      "lr": self.optimizer.param_groups[0]["lr"]})
        state["eval_s"] += time.perf_counter() - t0
        if bleu >= args.target or train_s >= args.minutes * 60:
            self.stats.is_max_update = True  # JoeyNMT's own way out of its loop

    TrainManager._validate = hooked_validate
    TrainManager.train_and_validate = hooked_tv
    TrainManager._log_scores = hooked_log
    train(rank=0, world_size=1, cfg=cfg, skip_test=True)
    reached = next((e for e in evals if e["bleu"] >= args.target), None)
    return {"evals": evals, "log": logs, "target": args.target, "cap_minutes": args.minutes,
            "reached_seconds": reached["train_seconds"] if reached else None,
            "best_bleu": max((e["bleu"] for e in evals), default=None),
            "params": state.get("params"), "threads": torch.get_num_threads()}


def decode(args) -> dict:
    """Sentences/s of greedy and beam-5 decoding of the test file, medians of repeats."""
    cfg = load_config(Path(args.config))
    cfg["testing"]["load_model"] = args.ckpt
    get_logger("", log_file=str(Path(args.ckpt).parent / "decode.log"))
    logging.getLogger("").setLevel(logging.WARNING)
    glob = parse_global_args(cfg, rank=0, mode="test")
    model, _, _, test_data = prepare(glob, rank=0, mode="test")
    refs = json.loads(Path(args.refs).read_text(encoding="utf-8"))
    n = len(test_data)
    out = {"sentences": n, "threads": torch.get_num_threads()}
    for name, beam in (("greedy", 1), ("beam5", 5)):
        test_args = glob.test._replace(beam_size=beam)
        run = lambda test_args=test_args: predict(  # noqa: E731
                              model=model, data=test_data, device=glob.device,
                              n_gpu=0, rank=0, compute_loss=False,
                              normalization=glob.train.normalization, args=test_args,
                              autocast=glob.autocast)
        run()  # warm-up, and the hypotheses for BLEU
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            result = run()
            times.append(time.perf_counter() - t0)
        seconds = statistics.median(times)
        out[name] = {"sentences_per_s": n / seconds, "seconds": times,
                     "bleu": course_bleu(result[2], refs[:n])}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["throughput", "train", "decode"])
    p.add_argument("config")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--refs")
    p.add_argument("--minutes", type=float, default=12.0)
    p.add_argument("--target", type=float, default=20.0)
    p.add_argument("--ckpt")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    fn = {"throughput": throughput, "train": train_to_bleu, "decode": decode}[args.mode]
    print(json.dumps(fn(args)))


if __name__ == "__main__":
    main()
