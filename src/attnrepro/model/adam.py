"""Adam (Kingma and Ba), with the usual beta1 = 0.9, beta2 = 0.999, eps = 1e-8.

One estimate of the mean and one of the square of the gradient, both corrected
for their initial bias. The update is written in the article's order:
m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
It runs on arrays of any shape: on the packed parameter vector it is one pass.
"""

import numpy as np


class Adam:
    def __init__(self, shape, lr, b1=0.9, b2=0.999, eps=1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps
        self.m = np.zeros(shape)  # first moment
        self.v = np.zeros(shape)  # second moment

    def step(self, p, g, t):
        """Update ``p`` in place with gradient ``g`` at step ``t`` (counted from 1)."""
        b1, b2 = self.b1, self.b2
        m, v = self.m, self.v
        m *= b1
        m += (1 - b1) * g
        v *= b2
        v += (1 - b2) * g**2
        p -= self.lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + self.eps)
