"""The decoder: embedding + positions, a stack of pre-LN or post-LN blocks, final layer norm.

pre-LN  (post_ln=False): x1 = x + att(LN1(x)),  x2 = x1 + ffn(LN2(x1))
post-LN (post_ln=True):  x1 = LN1(x + att(x)),  x2 = LN2(x1 + ffn(x1))

Both end with a final layer norm before the projection onto the vocabulary, so
they have the same parameters. The loss is the cross-entropy weighted per
position (the answer positions weigh 1, the others 0), divided by the sum of
the weights; :func:`loss_and_grads` returns it with the gradient of every tensor.
"""

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from attnrepro.core.attention import softmax
from attnrepro.model.attention import AttentionCache, attention, attention_backward
from attnrepro.model.layers import (
    FeedForwardCache, LayerNormCache, feed_forward, feed_forward_backward, flat, layer_norm,
    layer_norm_backward,
)


@dataclass(frozen=True)
class Arch:
    """What the forward pass needs besides the tensors."""

    layers: int
    heads: int
    scale: bool = True  # divide the scores by sqrt(d_h)
    post_ln: bool = False  # layer norm after the residual sum (original paper) or before (pre-LN)


class BlockCache(NamedTuple):
    """What one block's backward pass needs: the caches of its four parts."""

    attention: AttentionCache
    norm1: LayerNormCache
    ffn: FeedForwardCache
    norm2: LayerNormCache


class ForwardCache(NamedTuple):
    """What :func:`loss_and_grads` needs after :func:`forward`."""

    tokens: np.ndarray  # (B, T) integers
    blocks: list  # one BlockCache per layer
    xf: np.ndarray  # (B, T, d): the output of the final layer norm
    final_norm: LayerNormCache


def _block(x, p, prefix, arch):
    """Block ``prefix`` ("b0.", the names of its tensors in ``p``) on x: (B, T, d) -> (B, T, d),
    and the cache of its backward pass."""
    ffn = (p[prefix + "W1"], p[prefix + "b1"], p[prefix + "W2"], p[prefix + "b2"])
    if arch.post_ln:
        a, ca = attention(x, p, prefix, arch.heads, arch.scale)  # (B, T, d)
        x1, cn1 = layer_norm(x + a, p[prefix + "g1"], p[prefix + "be1"])  # (B, T, d)
        f, cf = feed_forward(x1, *ffn)  # (B, T, d), through (B, T, d_ff)
        x2, cn2 = layer_norm(x1 + f, p[prefix + "g2"], p[prefix + "be2"])  # (B, T, d)
    else:
        n1, cn1 = layer_norm(x, p[prefix + "g1"], p[prefix + "be1"])  # (B, T, d)
        a, ca = attention(n1, p, prefix, arch.heads, arch.scale)  # (B, T, d)
        x1 = x + a
        n2, cn2 = layer_norm(x1, p[prefix + "g2"], p[prefix + "be2"])  # (B, T, d)
        f, cf = feed_forward(n2, *ffn)  # (B, T, d), through (B, T, d_ff)
        x2 = x1 + f
    return x2, BlockCache(ca, cn1, cf, cn2)


def _block_backward(dx, cache, p, prefix, arch, grads):
    """Gradient (B, T, d) of block ``prefix``'s input from that of its output dx (B, T, d);
    writes the gradients of the block's tensors into ``grads``."""
    ca, cn1, cf, cn2 = cache
    if arch.post_ln:
        dx2, grads[prefix + "g2"], grads[prefix + "be2"] = layer_norm_backward(dx, cn2)  # x2 = LN(x1 + f)
        dn, ffn_grads = feed_forward_backward(dx2, cf, p[prefix + "W1"], p[prefix + "W2"])  # (B, T, d)
        dx1 = dx2 + dn
        dsum, grads[prefix + "g1"], grads[prefix + "be1"] = layer_norm_backward(dx1, cn1)  # x1 = LN(x + a)
        dx = dsum + attention_backward(dsum, ca, p, prefix, arch.heads, grads, arch.scale)  # (B, T, d)
    else:
        dn, ffn_grads = feed_forward_backward(dx, cf, p[prefix + "W1"], p[prefix + "W2"])  # (B, T, d)
        dn2, grads[prefix + "g2"], grads[prefix + "be2"] = layer_norm_backward(dn, cn2)
        dx1 = dx + dn2  # x2 = x1 + ffn(LN2(x1))
        dn1 = attention_backward(dx1, ca, p, prefix, arch.heads, grads, arch.scale)  # (B, T, d)
        dn1, grads[prefix + "g1"], grads[prefix + "be1"] = layer_norm_backward(dn1, cn1)
        dx = dx1 + dn1  # x1 = x + att(LN1(x))
    for name, value in zip(("W1", "b1", "W2", "b2"), ffn_grads):
        grads[prefix + name] = value
    return dx


def forward(p, tokens, arch):
    """Logits (B, T, vocab) for integer tokens (B, T), and the cache of the backward pass."""
    T = tokens.shape[1]
    x = p["E"][tokens] + p["P"][:T]  # (B, T, d)
    blocks = []
    for layer in range(arch.layers):
        x, cache = _block(x, p, f"b{layer}.", arch)
        blocks.append(cache)
    xf, cf = layer_norm(x, p["gf"], p["bef"])  # (B, T, d)
    return xf @ p["Wout"] + p["bout"], ForwardCache(tokens, blocks, xf, cf)


def attention_weights(cache):
    """Per layer, the attention weights (B, h, T, T) kept by :func:`forward`."""
    return [block.attention.P for block in cache.blocks]


def _weighted_cross_entropy(logits, targets, weights):
    """Loss sum(w * -log p(target)) / sum(w), and its gradient on the logits."""
    P = softmax(logits, axis=-1)  # (B, T, vocab)
    picked = targets[..., None]  # (B, T, 1)
    p_target = np.take_along_axis(P, picked, -1)[..., 0]  # (B, T)
    loss = -(weights * np.log(p_target + 1e-12)).sum() / weights.sum()
    dlogits = P  # (P - one-hot) * w / sum(w), built in place
    np.put_along_axis(dlogits, picked, np.take_along_axis(dlogits, picked, -1) - 1, -1)
    dlogits *= (weights / weights.sum())[..., None]
    return loss, dlogits


def loss(p, tokens, targets, weights, arch):
    """The weighted cross-entropy only (no backward pass)."""
    logits, _ = forward(p, tokens, arch)
    return _weighted_cross_entropy(logits, targets, weights)[0]


def loss_and_grads(p, tokens, targets, weights, arch):
    """Loss and {name: gradient} for every tensor of ``p``."""
    logits, (tokens, blocks, xf, cf) = forward(p, tokens, arch)
    value, dlogits = _weighted_cross_entropy(logits, targets, weights)
    grads = {"Wout": flat(xf).T @ flat(dlogits), "bout": dlogits.sum((0, 1))}
    dx, grads["gf"], grads["bef"] = layer_norm_backward(dlogits @ p["Wout"].T, cf)
    for layer in reversed(range(arch.layers)):
        dx = _block_backward(dx, blocks[layer], p, f"b{layer}.", arch, grads)
    grads["E"] = np.zeros_like(p["E"])
    np.add.at(grads["E"], tokens, dx)  # a token seen several times adds up its contributions
    grads["P"] = np.zeros_like(p["P"])
    grads["P"][: tokens.shape[1]] = dx.sum(0)
    return value, {name: grads[name] for name in p}
