"""A small model with the graph breaks people write every day (scan me with gbreak-lint)."""
import logging

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)


def debug_stats(x):
    print("mean", x.mean())
    return x


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.lin(x)
        y = debug_stats(y)
        return x + torch.relu(y)


class Net(nn.Module):
    def __init__(self, dim=8, depth=3):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


model = Net()


@torch.compile
def train_step(x, y):
    loss = ((model(x) - y) ** 2).mean()
    logger.info("loss %s", loss.item())
    return loss


if __name__ == "__main__":
    train_step(torch.randn(4, 8), torch.randn(4, 1))
