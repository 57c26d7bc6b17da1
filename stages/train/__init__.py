"""The MindSpore causal-LM trainer: config, model, loss, optimizer and schedule, compiled step, checkpoints, metrics."""
