"""The compiled training step: forward, backward, gradient reduction, clipping and the guarded update.

:func:`make_train_step` is the single-device / data-parallel step (``@ms.jit``, gradients averaged by
``nn.DistributedGradReducer``). :func:`make_parallel_train_step` is the same step for MindSpore's
semi-auto parallel (model parallel, pipeline stages, optimizer sharding): an undecorated function the
trainer wraps in ``AutoParallel`` (:func:`stages.train.parallel.build_auto_parallel`), which compiles it
and inserts the collectives; it runs on Ascend only.
"""

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

    The CPU branch of :func:`stages.train.device.setup_device`, kept for tests and benchmarks that want the CPU
    whatever the machine. MindSpore accepts the thread count once per process, so repeated calls are no-ops."""
    from stages.train.device import DeviceChoice, setup_device

    setup_device(DeviceChoice("CPU", None, "asked for", "cpu"), threads)


def _sum_of_squares(grad: Tensor) -> Tensor:
    """sum(grad²) in fp32, summed along the last axis first: MindSpore's CPU kernel reducing a whole tensor to a
    scalar in one go is about 4x slower (bench/README.md, "train")."""
    g = ops.cast(grad, ms.float32)
    rows = g.reshape(-1, g.shape[-1]) if g.ndim > 1 else g.reshape(1, -1)
    return ops.sum(ops.sum(ops.square(rows), -1))


def global_norm(grads: tuple[Tensor, ...]) -> Tensor:
    """L2 norm of all gradients together, in fp32."""
    return ops.sqrt(ops.addn([_sum_of_squares(g) for g in grads]))


def _clip_and_apply_if_finite(optimizer: nn.Optimizer, grads: tuple[Tensor, ...], loss: Tensor, grad_norm: Tensor,
                              max_norm: Tensor, counts_steps: bool, one: Tensor) -> Tensor:
    """In the graph: apply the gradients clipped to ``max_norm`` when the loss and the norm are finite, else
    skip the update (advancing the optimizer's step counter when it has one); returns whether it applied."""
    applied = ops.logical_and(ops.isfinite(loss), ops.isfinite(grad_norm))
    if applied:
        scale = max_norm / ops.maximum(grad_norm, max_norm)
        optimizer(tuple([g * ops.cast(scale, g.dtype) for g in grads]))
    elif counts_steps:
        ops.assign_add(optimizer.global_step, one)
    return applied


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
        applied = _clip_and_apply_if_finite(optimizer, grads, loss, grad_norm, max_norm, counts_steps, one)
        return loss, grad_norm, applied

    return train_step


class LossCell(nn.Cell):
    """The network with its loss, (inputs, labels) -> mean masked cross-entropy: the cell semi-auto parallel and the
    pipeline wrap."""

    def __init__(self, model: nn.Cell):
        super().__init__()
        self.model = model

    def construct(self, inputs: Tensor, labels: Tensor) -> Tensor:
        return masked_cross_entropy(self.model(inputs), labels)


class StageSum(nn.Cell):
    """Sum of a scalar over the pipeline stages: an AllReduce over the ranks that hold the same data- and
    model-parallel position in every stage (:func:`stages.train.parallel.pipeline_column_groups`)."""

    def __init__(self, group: str):
        super().__init__()
        self.all_reduce = ops.AllReduce(group=group)

    def construct(self, value: Tensor) -> Tensor:
        return self.all_reduce(value)


def make_parallel_train_step(net_with_loss: nn.Cell, optimizer: nn.Optimizer, clip_norm: float, *,
                             pipeline_reducer: nn.Cell | None = None, stage_sum: nn.Cell | None = None,
                             last_stage: bool = True) -> StepFn:
    """The semi-auto parallel step (inputs, labels) -> (loss, grad norm before clipping, applied); not compiled here.

    Under semi-auto parallel each rank feeds its data-parallel slice and the graph keeps single-device
    semantics: MindSpore inserts the gradient AllReduce over the data-parallel ranks and the
    collectives of the sharded matmuls, so the loss and the norm below are the global ones within a
    pipeline stage. With pipeline stages, ``pipeline_reducer`` (``PipelineGradReducer``) accumulates the
    micro-batches' gradients, only the last stage computes the loss, and each stage holds its own
    layers' gradients: ``stage_sum`` adds the last stage's loss and every stage's squared norm over the
    stages, so that every rank takes the same skip decision and clips by the same global norm.
    """
    net_with_loss.set_train()
    grad_fn = ms.value_and_grad(net_with_loss, None, optimizer.parameters)
    one = Tensor([1], ms.int32)
    counts_steps = hasattr(optimizer, "global_step")
    max_norm = Tensor(clip_norm, ms.float32)

    @ms.jit
    def train_step(inputs: Tensor, labels: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        loss, grads = grad_fn(inputs, labels)
        if pipeline_reducer is not None:
            grads = pipeline_reducer(grads)
        squares = ops.addn([_sum_of_squares(g) for g in grads])
        if stage_sum is not None:
            # Only the last stage's loss is real; the others contribute an exact zero (not 0 x whatever they hold).
            own = ops.cast(loss, ms.float32) if last_stage else ops.zeros_like(ops.cast(loss, ms.float32))
            loss = stage_sum(own)
            squares = stage_sum(squares)
        grad_norm = ops.sqrt(squares)
        applied = _clip_and_apply_if_finite(optimizer, grads, loss, grad_norm, max_norm, counts_steps, one)
        return loss, grad_norm, applied

    return train_step
