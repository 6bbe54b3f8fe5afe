"""Compiled (numba) kernels for :class:`pokersquares_env.vector.PokerSquaresVectorEnv` (``backend="numba"``).

Optional: this module imports numba, which the core package does not depend
on (install the ``fast`` extra).  Each kernel does, one sub-env at a time in
a compiled loop, exactly the array operations of the numpy backend in
``vector.py``, reading the same lookup tables (passed in as arguments, so the
two backends share one scoring truth); the tests step both backends side by
side and require identical observations, rewards and infos.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["advance", "count_illegal", "first_cards", "reset_rows"]


@njit(cache=True, nogil=True, inline="always")
def _copy_row(obs, out, i):  # pragma: no cover - compiled
    """``out[i] = obs[i]`` as a plain loop (numba's slice assignment is several times slower here)."""
    for j in range(obs.shape[1]):
        out[i, j] = obs[i, j]


@njit(cache=True, nogil=True)
def count_illegal(rows, cells, mask):  # pragma: no cover - compiled
    """How many of ``cells`` (one per sub-env in ``rows``) are out of range or not legal in ``mask``."""
    bad = 0
    for k in range(rows.shape[0]):
        c = cells[k]
        if c < 0 or c >= 25 or mask[rows[k], c] != 1:
            bad += 1
    return bad


@njit(cache=True, nogil=True)
def advance(rows, cells, obs, deck, board, placements, placed, mask, frontier, lin, combo, counts, card,
            points_table, window, flushable, slot_a, slot_b, rank_slot, lin_step, is_real, combo_bits,
            adjacent_rows, adjacent, first_cell_set, card_offset, unseen_offset,
            out_points, out_finished, out, write_out):  # pragma: no cover - compiled
    """Place the drawn card of each sub-env in ``rows`` on its legal cell; write line points and finished flags.

    The numba twin of ``PokerSquaresVectorEnv._advance`` (same state arrays, same tables, same order of writes).
    With ``write_out``, each updated observation row is also copied to the same row of ``out`` (the step's fresh
    observation array) while it is in cache: cheaper than copying the whole buffer in a second pass.
    """
    for k in range(rows.shape[0]):
        i = rows[k]
        c = cells[k]
        p = placed[i]
        code = deck[i, p]
        nxt = deck[i, p + 1]
        # Every table value first: stores to the state arrays then cannot force the tables to be re-read.
        sa = slot_a[code]
        sb = slot_b[code]
        na = slot_a[nxt]
        nb = slot_b[nxt]
        rs = rank_slot[code]
        step = lin_step[code]
        real = is_real[code]
        cbits = combo_bits[code]
        r = c // 5
        col = 5 + c - 5 * r
        board[i, c] = code
        placements[i, p] = c
        p += 1
        placed[i] = p
        # Observation: the card onto its cell, the drawn card replaced, the next card seen.
        cell_base = c * 18
        obs[i, cell_base + sa] = 1
        obs[i, cell_base + sb] = 1
        obs[i, card_offset + sa] = 0
        obs[i, card_offset + sb] = 0
        obs[i, card_offset + na] = 1
        obs[i, card_offset + nb] = 1
        obs[i, unseen_offset + nxt] = 0
        # The row and the column take the card; a completed line scores (incomplete keys score 0).
        same_r = counts[i, r, rs]
        same_c = counts[i, col, rs]
        counts[i, r, rs] = same_r + real
        counts[i, col, rs] = same_c + real
        key_r = np.int64(lin[i, r]) + step + 8 * np.int64(same_r)
        key_c = np.int64(lin[i, col]) + step + 8 * np.int64(same_c)
        lin[i, r] = key_r
        lin[i, col] = key_c
        bits_r = combo[i, r] | cbits
        bits_c = combo[i, col] | cbits
        combo[i, r] = bits_r
        combo[i, col] = bits_c
        pr = points_table[key_r + 2 * window[bits_r >> 4] + flushable[bits_r & 15]]
        pc = points_table[key_c + 2 * window[bits_c >> 4] + flushable[bits_c & 15]]
        out_points[k] = 0.0 + pr + pc  # the single env's additions, in its order

        # Legal cells.
        if adjacent:
            for j in range(25):
                f = frontier[i, j] or adjacent_rows[c, j]
                frontier[i, j] = f
                mask[i, j] = 1 if (f and board[i, j] < 0) else 0
        else:
            mask[i, c] = 0
            if first_cell_set and p == 1:
                for j in range(25):
                    mask[i, j] = 1 if board[i, j] < 0 else 0
        done = p == 25
        out_finished[k] = done
        if done:
            card[i] = -1
            for j in range(18):
                obs[i, card_offset + j] = 0
        else:
            card[i] = nxt
        if write_out:
            _copy_row(obs, out, i)


@njit(cache=True, nogil=True)
def reset_rows(rows, decks, obs, deck, board, placements, placed, lin, combo, counts, frontier, mask, first_mask,
               prev_done, card, slot_a, slot_b, card_offset, unseen_offset, deck_size, out,
               write_out):  # pragma: no cover - compiled
    """Start the games of sub-envs ``rows`` with ``decks`` (first 25 cards each): the twin of ``_reset_rows``.

    With ``write_out``, each new observation row is also copied to the same row of ``out`` (as ``advance`` does).
    """
    for k in range(rows.shape[0]):
        i = rows[k]
        # Only the blocks of occupied cells, the drawn card and the unseen flags can be non-zero.
        for j in range(25):
            if board[i, j] >= 0:
                obs[i, j * 18:j * 18 + 18] = 0
        obs[i, card_offset:card_offset + 18] = 0
        for j in range(25):
            deck[i, j] = decks[k, j]
            board[i, j] = -1
            placements[i, j] = -1
            frontier[i, j] = False
            mask[i, j] = first_mask[j]
        deck[i, 25] = decks[k, 24]
        placed[i] = 0
        lin[i, :] = 0
        combo[i, :] = 0
        counts[i, :, :] = 0
        prev_done[i] = False
        first = decks[k, 0]
        card[i] = first
        obs[i, unseen_offset:unseen_offset + deck_size] = 1
        obs[i, card_offset + slot_a[first]] = 1
        obs[i, card_offset + slot_b[first]] = 1
        obs[i, unseen_offset + first] = 0
        if write_out:
            _copy_row(obs, out, i)


@njit(cache=True, nogil=True)
def first_cards(keys, order, count):  # pragma: no cover - compiled
    """The first ``count`` columns of ``order`` (an argsort of each row of ``keys``), and which rows hold a tie.

    A tie among the ``count + 1`` smallest keys of a row is where an unstable sort may differ from the stable
    one; the caller re-sorts those rows stably (about 1e-13 likely per row for a real generator).
    """
    rows = keys.shape[0]
    out = np.empty((rows, count), dtype=np.int64)
    tied = np.zeros(rows, dtype=np.bool_)
    for i in range(rows):
        prev = keys[i, order[i, 0]]
        out[i, 0] = order[i, 0]
        for j in range(1, count + 1):
            cur = keys[i, order[i, j]]
            if cur == prev:
                tied[i] = True
            prev = cur
            if j < count:
                out[i, j] = order[i, j]
    return out, tied
