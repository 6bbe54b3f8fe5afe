"""The lines network of ``fast-ppo`` as a policy for sb3-contrib's MaskablePPO (``train --algo maskable-ppo --net lines``).

SB3's default ``MlpPolicy`` reads the flat 522-number observation with a plain MLP, which has to discover on its own
that a card matters through the row and column it joins; in 200,000 steps it does not leave random play (docs/training.md,
"Trainers on the same budget").  :class:`LinesPolicy` plugs :class:`agents.fast_ppo.LinesNet` into SB3's actor-critic:
the net's 25 per-cell scores are the action logits (masked by MaskablePPO as usual) and its state value is the critic,
so SB3 trains exactly the network fast-ppo trains, with SB3's PPO, callbacks, saving and loading.

A run's ``model.zip`` names this class; loading it (``MaskablePPO.load``, ``ppo:PATH``) imports this module, which
needs torch and sb3-contrib (the ``train`` extra).
"""

from __future__ import annotations

from typing import Any

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

from agents.fast_ppo import LinesNet

__all__ = ["LinesPolicy"]


class _LinesLatent(nn.Module):
    """SB3's ``mlp_extractor`` slot: (cell scores, value) as the actor's and the critic's latent codes."""

    latent_dim_pi = 25
    latent_dim_vf = 1

    def __init__(self, hidden: list[int]):
        super().__init__()
        self.net = LinesNet(hidden)

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores, value = self.net(features)
        return scores, value[:, None]

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.net(features)[0]

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.net(features)[1][:, None]


#: the ``net_arch`` SB3 gives an actor-critic policy built without one (and stores with a saved model)
_SB3_DEFAULT_ARCH = {"pi": [64, 64], "vf": [64, 64]}


class LinesPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's policy on :class:`agents.fast_ppo.LinesNet` (``policy_kwargs={"lines_hidden": [64, 64]}``).

    The net's cell scores are the logits and its value the critic's output as they are (``action_net`` and
    ``value_net`` are identities), so the policy stays equivariant to permuting rows or columns, as the score is.
    The net keeps PyTorch's default initialisation, as in fast-ppo (``ortho_init`` defaults to False here).
    """

    def __init__(self, *args: Any, lines_hidden: list[int] | tuple[int, ...] = (64, 64), **kwargs: Any):
        if (not isinstance(lines_hidden, (list, tuple)) or not lines_hidden
                or any(isinstance(h, bool) or not isinstance(h, int) or h < 1 for h in lines_hidden)):
            raise ValueError(f"lines_hidden={lines_hidden!r}: expected a list of one or more positive layer sizes")
        self._lines_hidden = [int(h) for h in lines_hidden]
        net_arch = kwargs.get("net_arch", args[3] if len(args) > 3 else None)
        if net_arch is not None and net_arch != _SB3_DEFAULT_ARCH:  # SB3's default: what a saved policy stores
            raise ValueError(f"net_arch={net_arch!r}: LinesPolicy's layers are lines_hidden (now "
                             f"{self._lines_hidden}); net_arch sizes SB3's MLP extractor, which this policy does not use")
        kwargs.setdefault("ortho_init", False)
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = _LinesLatent(self._lines_hidden)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        # the scores and the value are the outputs: no linear heads on top (SB3 made a 25x25 and a 1x1 layer)
        self.action_net = nn.Identity()
        self.value_net = nn.Identity()
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["lines_hidden"] = list(self._lines_hidden)
        return data
