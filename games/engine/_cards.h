/* Cards as bits, for the engine's C extensions (games/engine/_native.c, games/engine/players/_search_native.c),
 * as games/engine/masks.py makes them: a card is an index 0..51 in the order of rank (A..K), then suit (C D H S),
 * a set of cards a 52-bit mask. Each extension includes this file and fills its own copy of the tables once, at
 * import (cards_tables_make); both check them against masks.py's there (the search its FITTERS, TARGETS and
 * KINGS, the moves its card order). */

#ifndef KINGSCORNER_CARDS_H
#define KINGSCORNER_CARDS_H

#include <stdint.h>

typedef uint64_t u64;
typedef int64_t i64;

#define CARD_COUNT 52
#define RANK_COUNT 13
#define SUIT_COUNT 4
#define ALL_CARDS ((((u64)1) << CARD_COUNT) - 1)

/* FITTERS[top]: the cards that build on `top` (masks.FITTERS); TARGETS[card]: those `card` builds on. */
static u64 FITTERS[CARD_COUNT];
static u64 TARGETS[CARD_COUNT];
static u64 KINGS;
static u64 NOT_KINGS;
/* Each rank is a nibble of four suits, C D H S: C and S black, D and H red. */
static u64 NIBBLES;
static u64 BLACK;
static u64 RED;

static inline int rank_of(int card) { return card / SUIT_COUNT + 1; }
static inline int is_red(int card) { return card % SUIT_COUNT == 1 || card % SUIT_COUNT == 2; }

static void cards_tables_make(void) {
    NIBBLES = 0;
    for (int rank = 0; rank < RANK_COUNT; rank++) NIBBLES |= ((u64)1) << (4 * rank);
    BLACK = NIBBLES * 9; /* 0b1001: C and S */
    RED = NIBBLES * 6;   /* 0b0110: D and H */
    KINGS = 0;
    for (int card = 0; card < CARD_COUNT; card++) {
        if (rank_of(card) == RANK_COUNT) KINGS |= ((u64)1) << card;
    }
    NOT_KINGS = ALL_CARDS & ~KINGS;
    for (int top = 0; top < CARD_COUNT; top++) {
        u64 fitting = 0;
        for (int card = 0; card < CARD_COUNT; card++) {
            if (rank_of(card) + 1 == rank_of(top) && is_red(card) != is_red(top)) fitting |= ((u64)1) << card;
        }
        FITTERS[top] = fitting;
    }
    for (int card = 0; card < CARD_COUNT; card++) {
        u64 targets = 0;
        for (int top = 0; top < CARD_COUNT; top++) {
            if (FITTERS[top] >> card & 1) targets |= ((u64)1) << top;
        }
        TARGETS[card] = targets;
    }
}

/* The cards of the opposite colour at the same ranks as `cards`, each rank's in its own nibble: shifted down
 * a rank it is masks.builds_on, up a rank masks.built_on. */
static inline u64 crossed(u64 cards) {
    u64 black = ((cards & BLACK) | (cards & BLACK) >> 3) & NIBBLES;
    u64 red = ((cards & RED) >> 1 | (cards & RED) >> 2) & NIBBLES;
    return black << 1 | black << 2 | red | red << 3;
}

static inline u64 builds_on(u64 cards) { return crossed(cards) >> 4; }

static inline u64 built_on(u64 cards) { return (crossed(cards) << 4) & ALL_CARDS; }

#endif
