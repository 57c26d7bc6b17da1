"""The compiled training step: forward, backward, gradient reduction, clipping and the guarded update."""

from __future__ import annotations

import functools
from collections.abc import Callable

import mindspore as ms
from mindspore import Tensor, nn, ops

from stages.train.loss import masked_cross_entropy

StepFn = Callable[[Tensor, Tensor], tuple[Tensor, Tensor, Tensor]]


@functools.cache
def setup_cpu(threads: int = 2) -> None:
    """Run on the CPU backend in graph mode with ``threads`` operator threads (MindSpore defaults to 25).

    MindSpore accepts the thread count once per process, so repeated calls are no-ops."""
    ms.set_device("CPU")
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.device_context.cpu.op_tuning.threads_num(threads)


def _sum_of_squares(grad: Tensor) -> Tensor:
    """sum(grad²) in fp32, summed along the last axis first: MindSpore's CPU kernel reducing a whole tensor to a
    scalar in one go is about 4x slower (bench/README.md, "train")."""
    g = ops.cast(grad, ms.float32)
    rows = g.reshape(-1, g.shape[-1]) if g.ndim > 1 else g.reshape(1, -1)
    return ops.sum(ops.sum(ops.square(rows), -1))


def global_norm(grads: tuple[Tensor, ...]) -> Tensor:
    """L2 norm of all gradients together, in fp32."""
    return ops.sqrt(ops.addn([_sum_of_squares(g) for g in grads]))


def make_train_step(model: nn.Cell, optimizer: nn.Optimizer, clip_norm: float,
                    grad_reducer: nn.Cell | None = None, loss_mean: nn.Cell | None = None) -> StepFn:
    """A compiled step (inputs, labels) -> (loss, grad norm before clipping, applied).

    The update is skipped in the graph when the loss or the gradient norm is not finite; the
    optimizer's step counter still advances, so the schedule stays aligned with the trainer's step.
    Under data parallel, ``grad_reducer`` averages the gradients over the ranks before the norm
    is taken and ``loss_mean`` averages the reported loss, so every rank makes the same decision.
    """

    def forward(inputs: Tensor, labels: Tensor) -> Tensor:
        return masked_cross_entropy(model(inputs), labels)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)
    one = Tensor([1], ms.int32)
    counts_steps = hasattr(optimizer, "global_step")  # nn optimizers drive their schedule from it
    max_norm = Tensor(clip_norm, ms.float32)

    @ms.jit
    def train_step(inputs: Tensor, labels: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        loss, grads = grad_fn(inputs, labels)
        if grad_reducer is not None:
            grads = grad_reducer(grads)
            loss = loss_mean(loss)
        grad_norm = global_norm(grads)
        applied = ops.logical_and(ops.isfinite(loss), ops.isfinite(grad_norm))
        if applied:
            scale = max_norm / ops.maximum(grad_norm, max_norm)
            optimizer(tuple([g * ops.cast(scale, g.dtype) for g in grads]))
        elif counts_steps:
            ops.assign_add(optimizer.global_step, one)
        return loss, grad_norm, applied

    return train_step
