"""The hand-written NumPy decoder of article 001: parameters, forward, backward, Adam, tasks.

Every function keeps the arithmetic of the article's listings (same operation
order, same random draws), so that a training gives the same bits as the
article's own code on the same machine. Modules, from the bottom up:

- :mod:`params`: the tensors, initialised in the article's draw order, and their counts;
- :mod:`layers`: layer norm and the ReLU feed-forward network, forward and backward;
- :mod:`attention`: causal multi-head attention, forward and backward;
- :mod:`decoder`: the pre-LN / post-LN stack, the weighted cross-entropy and all gradients;
- :mod:`adam`: the optimizer;
- :mod:`tasks`: copy and sort batches, evaluation by true generation;
- :mod:`train`: the training loop.
"""
