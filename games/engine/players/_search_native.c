/* Sharp's search (games/engine/players/search.py) and its play-outs (rollout.play_out) in C: the same positions
 * visited in the same order, the same balance in the same floating-point steps, the same end positions kept,
 * the same turns and draws played out, so that it chooses exactly as the Python does
 * (tests/engine/test_search_native.py compares them on many positions and play-outs, and
 * tests/engine/test_builds.py plays whole hands in both builds). search.py and rollout.py document what they do
 * and why; this file only says where C differs in how it keeps things.
 *
 * Built by setup.py beside the mypyc-compiled engine, against the stable ABI (Python 3.11 and later); where
 * nothing compiles, search.py runs its own _Search. Cards are indexes 0..51 (rank, then suit C D H S), a hand
 * a 52-bit mask, a pile -1 when empty, bottom * 64 + top for a side, its top alone for a corner. */

#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../_cards.h"

#define PILE_COUNT 8
#define SIDE_COUNT 4
#define TOP 63
#define BOTTOM_SHIFT 6
#define PLAY 0
#define MOVE_PILE 1
#define CLOCK_EVERY 32
/* search.py's HELD_FOR_ME and CHAIN_WEIGHTS; the module checks them against search.py's at import. */
#define HELD_FOR_ME 5.0
#define CHAIN_0 1.0
#define CHAIN_1 0.8
#define CHAIN_2 0.5

/* The machine's instruction where the compiler may use it; elsewhere (x86-64 without -mpopcnt, which a build
 * for any x86-64 must not assume) the bits added in parallel inline, rather than libgcc's __popcountdi2 call. */
#if defined(__POPCNT__) || !defined(__x86_64__)
static int popcount(u64 mask) { return __builtin_popcountll(mask); }
#else
static int popcount(u64 mask) {
    mask -= (mask >> 1) & 0x5555555555555555ULL;
    mask = (mask & 0x3333333333333333ULL) + ((mask >> 2) & 0x3333333333333333ULL);
    mask = (mask + (mask >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((mask * 0x0101010101010101ULL) >> 56);
}
#endif
static int lowest(u64 mask) { return __builtin_ctzll(mask); }
static int highest(u64 mask) { return 63 - __builtin_clzll(mask); }

/* search._multiset. */
static u64 multiset(i64 w, i64 x, i64 y, i64 z) {
    i64 t;
    if (w > x) { t = w; w = x; x = t; }
    if (y > z) { t = y; y = z; z = t; }
    if (w > y) { t = w; w = y; y = t; }
    if (x > z) { t = x; x = z; z = t; }
    if (x > y) { t = x; x = y; y = t; }
    return (u64)((((((w + 1) << 13 | (x + 1)) << 13 | (y + 1)) << 13) | (z + 1)));
}

typedef struct {
    int kind, a, b;
} Move;

/* An end position kept: its balance, when it was found (the node count + 1) and the moves reaching it. */
typedef struct {
    double balance;
    i64 order;
    Move *moves;
    int length;
} Kept;

/* The positions seen: an open-addressing set of (hand, sides, corners). */
typedef struct {
    u64 hand, sides, corners;
} Key;

typedef struct {
    Key *keys;
    unsigned char *used;
    size_t capacity; /* a power of two */
    size_t count;
} Seen;

/* The best end position of each hand: an open-addressing map from the hand. */
typedef struct {
    u64 *hands;
    Kept *kept;
    unsigned char *used;
    size_t capacity;
    size_t count;
} Best;

typedef struct {
    u64 unseen;
    u64 side_cards, corner_cards, corner_kings, corner_fill;
    int king_pile_to_corner;
    double gift_cost;
    u64 awaited;
    i64 node_budget;
    int has_deadline;
    i64 deadline_ns;
    int per_hand;
    int budget_reached, cut_off, failed;
    Seen seen;
    Best best_of_hand;
    Kept best;
    Move *path;
    int path_length, path_capacity;
} Search;

static u64 mix(u64 value) {
    value ^= value >> 33;
    value *= 0xff51afd7ed558ccdULL;
    value ^= value >> 33;
    value *= 0xc4ceb9fe1a85ec53ULL;
    value ^= value >> 33;
    return value;
}

static u64 key_hash(const Key *key) {
    return mix(key->hand ^ mix(key->sides ^ mix(key->corners)));
}

static int seen_init(Seen *seen, size_t capacity) {
    seen->capacity = capacity;
    seen->count = 0;
    seen->keys = malloc(capacity * sizeof(Key));
    seen->used = calloc(capacity, 1);
    return seen->keys != NULL && seen->used != NULL;
}

/* Whether the key is in the set; `slot` is where it is, or the empty slot where it would go. */
static int seen_find(const Seen *seen, const Key *key, size_t *slot) {
    size_t mask = seen->capacity - 1;
    size_t at = (size_t)key_hash(key) & mask;
    while (seen->used[at]) {
        const Key *here = &seen->keys[at];
        if (here->hand == key->hand && here->sides == key->sides && here->corners == key->corners) {
            *slot = at;
            return 1;
        }
        at = (at + 1) & mask;
    }
    *slot = at;
    return 0;
}

static void seen_put(Seen *seen, const Key *key, size_t slot) {
    seen->keys[slot] = *key;
    seen->used[slot] = 1;
    seen->count++;
}

/* Adds a key that seen_find did not find, at the `slot` it gave, unless the set must grow first (at half
 * full). 0 on no memory. */
static int seen_add(Seen *seen, const Key *key, size_t slot) {
    if ((seen->count + 1) * 2 > seen->capacity) {
        Seen grown;
        if (!seen_init(&grown, seen->capacity * 2)) {
            free(grown.keys);
            free(grown.used);
            return 0;
        }
        for (size_t index = 0; index < seen->capacity; index++) {
            if (!seen->used[index]) continue;
            seen_find(&grown, &seen->keys[index], &slot);
            seen_put(&grown, &seen->keys[index], slot);
        }
        free(seen->keys);
        free(seen->used);
        *seen = grown;
        seen_find(seen, key, &slot);
    }
    seen_put(seen, key, slot);
    return 1;
}

static int best_init(Best *best, size_t capacity) {
    best->capacity = capacity;
    best->count = 0;
    best->hands = malloc(capacity * sizeof(u64));
    best->kept = malloc(capacity * sizeof(Kept));
    best->used = calloc(capacity, 1);
    return best->hands != NULL && best->kept != NULL && best->used != NULL;
}

static void best_free(Best *best) {
    if (best->kept != NULL && best->used != NULL) {
        for (size_t index = 0; index < best->capacity; index++) {
            if (best->used[index]) free(best->kept[index].moves);
        }
    }
    free(best->hands);
    free(best->kept);
    free(best->used);
}

/* The kept entry of `hand`, made empty (length -1) if it had none; NULL on no memory. */
static Kept *best_slot(Best *best, u64 hand) {
    size_t mask = best->capacity - 1;
    size_t slot = (size_t)mix(hand) & mask;
    while (best->used[slot]) {
        if (best->hands[slot] == hand) return &best->kept[slot];
        slot = (slot + 1) & mask;
    }
    if ((best->count + 1) * 2 > best->capacity) {
        Best grown;
        if (!best_init(&grown, best->capacity * 2)) {
            free(grown.hands);
            free(grown.kept);
            free(grown.used);
            return NULL;
        }
        for (size_t index = 0; index < best->capacity; index++) {
            if (!best->used[index]) continue;
            size_t to = (size_t)mix(best->hands[index]) & (grown.capacity - 1);
            while (grown.used[to]) to = (to + 1) & (grown.capacity - 1);
            grown.used[to] = 1;
            grown.hands[to] = best->hands[index];
            grown.kept[to] = best->kept[index];
            grown.count++;
        }
        free(best->hands);
        free(best->kept);
        free(best->used);
        *best = grown;
        return best_slot(best, hand);
    }
    best->used[slot] = 1;
    best->hands[slot] = hand;
    best->kept[slot].moves = NULL;
    best->kept[slot].length = -1;
    best->count++;
    return &best->kept[slot];
}

/* Keeps (balance, order, the path so far) in `kept`. 0 on no memory. */
static int keep(Search *search, Kept *kept, double balance, i64 order) {
    Move *moves = NULL;
    if (search->path_length > 0) {
        moves = malloc((size_t)search->path_length * sizeof(Move));
        if (moves == NULL) return 0;
        memcpy(moves, search->path, (size_t)search->path_length * sizeof(Move));
    }
    free(kept->moves);
    kept->moves = moves;
    kept->length = search->path_length;
    kept->balance = balance;
    kept->order = order;
    return 1;
}

static int path_push(Search *search, int kind, int a, int b) {
    if (search->path_length == search->path_capacity) {
        int capacity = search->path_capacity * 2;
        Move *grown = realloc(search->path, (size_t)capacity * sizeof(Move));
        if (grown == NULL) return 0;
        search->path = grown;
        search->path_capacity = capacity;
    }
    Move *move = &search->path[search->path_length++];
    move->kind = kind;
    move->a = a;
    move->b = b;
    return 1;
}

static i64 now_ns(void) {
    /* time.perf_counter_ns()'s clock on Linux. */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (i64)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* search.held_for_me. */
static int held_for_me(u64 hand, const i64 *piles, u64 unseen) {
    u64 held = 0;
    int count = 0;
    for (int pile = PILE_COUNT - 1; pile >= 0; pile--) {
        i64 encoded = piles[pile];
        if (encoded < 0) continue;
        int top = (int)(encoded & TOP);
        for (;;) {
            u64 fitting = FITTERS[top];
            if (fitting & unseen) break;
            u64 mine = fitting & hand & ~held;
            if (!mine) break;
            u64 card = mine & (~mine + 1);
            held |= card;
            count++;
            top = lowest(card);
        }
    }
    return count;
}

/* table.pile_moves with every_space false, into `moves` (at most 4 sources x 7 targets); how many. */
static int pile_moves(int king_pile_to_corner, const i64 *piles, u64 tops, Move *moves) {
    int count = 0;
    for (int source = 0; source < SIDE_COUNT; source++) {
        i64 moving = piles[source];
        if (moving < 0) continue;
        int bottom = (int)(moving >> BOTTOM_SHIFT);
        int into_corner = king_pile_to_corner && ((((u64)1) << bottom) & KINGS);
        if (!((tops & TARGETS[bottom]) || into_corner)) continue;
        int corner_offered = 0;
        for (int target = 0; target < PILE_COUNT; target++) {
            if (target == source) continue;
            i64 encoded = piles[target];
            if (encoded >= 0) {
                if (FITTERS[encoded & TOP] >> bottom & 1) {
                    moves[count].kind = MOVE_PILE;
                    moves[count].a = source;
                    moves[count].b = target;
                    count++;
                }
            } else if (target >= SIDE_COUNT && into_corner && !corner_offered) {
                corner_offered = 1;
                moves[count].kind = MOVE_PILE;
                moves[count].a = source;
                moves[count].b = target;
                count++;
            }
        }
    }
    return count;
}

/* table.apply_move, on `piles` in place; the hand left. */
static u64 apply_move(u64 hand, i64 *piles, const Move *move) {
    if (move->kind == PLAY) {
        i64 encoded = piles[move->b];
        if (encoded >= 0) {
            piles[move->b] = encoded - (encoded & TOP) + move->a;
        } else {
            piles[move->b] = move->b < SIDE_COUNT ? ((i64)move->a << BOTTOM_SHIFT | move->a) : move->a;
        }
        return hand & ~(((u64)1) << move->a);
    }
    i64 top = piles[move->a] & TOP;
    i64 onto = piles[move->b];
    piles[move->b] = onto >= 0 ? onto - (onto & TOP) + top : top;
    piles[move->a] = -1;
    return hand;
}

static int visit(Search *search, u64 hand, const i64 *piles);

/* Visits the position that one move (apply_move, as _Search.visit inlines it) makes of this one, the move on
 * the path meanwhile; whether to stop. */
static int visit_child(Search *search, int kind, int a, int b, u64 hand, const i64 *piles) {
    Move move = {kind, a, b};
    i64 child[PILE_COUNT];
    memcpy(child, piles, sizeof child);
    hand = apply_move(hand, child, &move);
    if (!path_push(search, kind, a, b)) {
        search->failed = 1;
        return 1;
    }
    int stop = visit(search, hand, child);
    search->path_length--;
    return stop;
}

/* _Search.visit, step for step. */
static int visit(Search *search, u64 hand, const i64 *piles) {
    Key key = {hand, multiset(piles[0], piles[1], piles[2], piles[3]),
               multiset(piles[4], piles[5], piles[6], piles[7])};
    size_t slot;
    if (seen_find(&search->seen, &key, &slot)) return 0;
    i64 count = (i64)search->seen.count;
    if (count >= search->node_budget) {
        search->budget_reached = 1;
        return 1;
    }
    if (search->has_deadline && count % CLOCK_EVERY == 1) {
        if (now_ns() > search->deadline_ns) {
            search->budget_reached = search->cut_off = 1;
            return 1;
        }
    }
    if (!seen_add(&search->seen, &key, slot)) {
        search->failed = 1;
        return 1;
    }
    if (!hand) {
        Kept *kept = search->per_hand ? best_slot(&search->best_of_hand, 0) : &search->best;
        if (kept == NULL || !keep(search, kept, INFINITY, count + 1)) search->failed = 1;
        return 1;
    }
    u64 side_cards = search->side_cards, corner_cards = search->corner_cards;
    u64 tops = 0, spaces = 0, bottoms = 0;
    int side = -1, corner = -1;
    for (int pile = 0; pile < PILE_COUNT; pile++) {
        i64 encoded = piles[pile];
        if (encoded >= 0) {
            tops |= ((u64)1) << (encoded & TOP);
            if (pile < SIDE_COUNT) bottoms |= ((u64)1) << (encoded >> BOTTOM_SHIFT);
        } else if (pile < SIDE_COUNT) {
            spaces |= side_cards;
            if (side < 0) side = pile;
        } else {
            spaces |= corner_cards;
            if (corner < 0) corner = pile;
        }
    }
    u64 fitting = builds_on(tops);
    Move moving[SIDE_COUNT * (PILE_COUNT - 1)];
    int moving_count = 0;
    if ((bottoms & fitting) || ((bottoms & KINGS) && corner >= 0 && search->king_pile_to_corner)) {
        moving_count = pile_moves(search->king_pile_to_corner, piles, tops, moving);
        if (moving_count) spaces |= side_cards;
    }
    u64 unseen = search->unseen;
    u64 level = (fitting | spaces) & unseen;
    u64 counted = level;
    double given = CHAIN_0 * (double)popcount(level);
    u64 second = builds_on(level) & unseen & ~counted;
    given += CHAIN_1 * (double)popcount(second);
    u64 third = builds_on(second) & unseen & ~(counted | second);
    given += CHAIN_2 * (double)popcount(third);
    int held = (hand & builds_on(tops & search->awaited)) ? held_for_me(hand, piles, unseen) : 0;
    double balance = (double)(-(popcount(hand & NOT_KINGS) + 10 * popcount(hand & KINGS)));
    balance = balance + HELD_FOR_ME * (double)held;
    balance = balance - search->gift_cost * given;
    if (search->per_hand) {
        Kept *kept = best_slot(&search->best_of_hand, hand);
        if (kept == NULL) {
            search->failed = 1;
            return 1;
        }
        if ((kept->length < 0 || balance > kept->balance) && !keep(search, kept, balance, count + 1)) {
            search->failed = 1;
            return 1;
        }
    } else if (balance > search->best.balance && !keep(search, &search->best, balance, count + 1)) {
        search->failed = 1;
        return 1;
    }
    if (corner >= 0) {
        u64 kings = hand & search->corner_kings;
        while (kings) {
            u64 low = kings & (~kings + 1);
            kings ^= low;
            if (visit_child(search, PLAY, lowest(low), corner, hand, piles)) return 1;
        }
    }
    if (hand & fitting) {
        for (int pile = 0; pile < PILE_COUNT; pile++) {
            i64 encoded = piles[pile];
            if (encoded < 0) continue;
            u64 mine = FITTERS[encoded & TOP] & hand;
            while (mine) {
                u64 low = mine & (~mine + 1);
                mine ^= low;
                if (visit_child(search, PLAY, lowest(low), pile, hand, piles)) return 1;
            }
        }
    }
    for (int index = 0; index < moving_count; index++) {
        if (visit_child(search, MOVE_PILE, moving[index].a, moving[index].b, hand, piles)) return 1;
    }
    if (corner >= 0) {
        u64 fill = hand & search->corner_fill;
        while (fill) {
            int card = highest(fill);
            fill ^= ((u64)1) << card;
            if (visit_child(search, PLAY, card, corner, hand, piles)) return 1;
        }
    }
    if (side >= 0) {
        u64 fill = hand & side_cards;
        while (fill) {
            int card = highest(fill);
            fill ^= ((u64)1) << card;
            if (visit_child(search, PLAY, card, side, hand, piles)) return 1;
        }
    }
    return 0;
}

static int kept_rank(const void *left, const void *right) {
    /* search._rank: the highest balance first, the one found first among equals. */
    const Kept *a = *(const Kept *const *)left, *b = *(const Kept *const *)right;
    if (a->balance != b->balance) return a->balance > b->balance ? -1 : 1;
    return a->order < b->order ? -1 : (a->order > b->order ? 1 : 0);
}

static PyObject *moves_tuple(const Kept *kept) {
    PyObject *moves = PyTuple_New(kept->length);
    if (moves == NULL) return NULL;
    for (int index = 0; index < kept->length; index++) {
        const Move *move = &kept->moves[index];
        PyObject *entry = Py_BuildValue("(iii)", move->kind, move->a, move->b);
        if (entry == NULL || PyTuple_SetItem(moves, index, entry) < 0) {
            Py_DECREF(moves);
            return NULL;
        }
    }
    return moves;
}

static int u64_of(PyObject *value, u64 *out) {
    unsigned long long read = PyLong_AsUnsignedLongLong(value);
    if (read == (unsigned long long)-1 && PyErr_Occurred()) return 0;
    *out = (u64)read;
    return 1;
}

static int i64_of(PyObject *value, i64 *out) {
    long long read = PyLong_AsLongLong(value);
    if (read == -1 && PyErr_Occurred()) return 0;
    *out = (i64)read;
    return 1;
}

/* A table's piles from a tuple of eight encoded piles; 0 with an exception set when it is not one. */
static int piles_of(PyObject *value, i64 *piles) {
    if (!PyTuple_Check(value) || PyTuple_Size(value) != PILE_COUNT) {
        PyErr_SetString(PyExc_TypeError, "piles must be a tuple of 8 integers");
        return 0;
    }
    for (int pile = 0; pile < PILE_COUNT; pile++) {
        if (!i64_of(PyTuple_GetItem(value, pile), &piles[pile])) return 0;
        i64 encoded = piles[pile];
        if (encoded < -1 || encoded >= 64 * CARD_COUNT || (encoded >= 0 && (encoded & TOP) >= CARD_COUNT)) {
            PyErr_SetString(PyExc_ValueError, "a pile is -1 or a card code below 3328 whose top is a card");
            return 0;
        }
    }
    return 1;
}

PyDoc_STRVAR(search_doc,
             "search(hand, piles, unseen, side_cards, corner_cards, king_pile_to_corner, gift_cost, node_budget, "
             "keep, deadline_ns) -> (ranked, nodes, budget_reached, cut_off)\n\n"
             "search.search's work: `ranked` holds (balance, moves) of the `keep` best end positions, best first "
             "(with keep 1, the best of all; with more, the best of each hand left).");

static PyObject *search_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError, "search() takes 10 arguments");
        return NULL;
    }
    Search search;
    memset(&search, 0, sizeof search);
    u64 hand;
    i64 piles[PILE_COUNT];
    i64 keep_count;
    if (!u64_of(args[0], &hand)) return NULL;
    if (!piles_of(args[1], piles)) return NULL;
    if (!u64_of(args[2], &search.unseen) || !u64_of(args[3], &search.side_cards) ||
        !u64_of(args[4], &search.corner_cards)) {
        return NULL;
    }
    if (hand > ALL_CARDS || search.unseen > ALL_CARDS || search.side_cards > ALL_CARDS ||
        search.corner_cards > ALL_CARDS) {
        PyErr_SetString(PyExc_ValueError, "a card mask is below 2**52");
        return NULL;
    }
    int king_pile_to_corner = PyObject_IsTrue(args[5]);
    if (king_pile_to_corner < 0) return NULL;
    search.king_pile_to_corner = king_pile_to_corner;
    search.gift_cost = PyFloat_AsDouble(args[6]);
    if (search.gift_cost == -1.0 && PyErr_Occurred()) return NULL;
    if (!i64_of(args[7], &search.node_budget) || !i64_of(args[8], &keep_count)) return NULL;
    if (search.node_budget < 1 || keep_count < 1) {
        PyErr_SetString(PyExc_ValueError, "the node budget and the candidates kept are at least 1");
        return NULL;
    }
    if (args[9] != Py_None) {
        if (!i64_of(args[9], &search.deadline_ns)) return NULL;
        search.has_deadline = 1;
    }
    search.corner_kings = search.corner_cards & KINGS;
    search.corner_fill = search.corner_cards & ~KINGS;
    search.awaited = ~built_on(search.unseen);
    search.per_hand = keep_count > 1;
    search.best.balance = -INFINITY;
    search.best.order = 0;
    search.best.length = 0;
    search.path_capacity = 64;
    search.path = malloc((size_t)search.path_capacity * sizeof(Move));
    size_t capacity = 256;
    while (capacity < 4096 && (i64)(capacity / 2) < search.node_budget) capacity *= 2;
    int ready = search.path != NULL && seen_init(&search.seen, capacity);
    if (search.per_hand) ready = ready && best_init(&search.best_of_hand, 64);
    PyObject *result = NULL;
    if (!ready) {
        PyErr_NoMemory();
        goto done;
    }
    visit(&search, hand, piles);
    if (search.failed) {
        PyErr_NoMemory();
        goto done;
    }
    Kept **ranked;
    size_t ranked_count;
    if (search.per_hand) {
        ranked = malloc(search.best_of_hand.count * sizeof(Kept *));
        if (ranked == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        ranked_count = 0;
        for (size_t index = 0; index < search.best_of_hand.capacity; index++) {
            if (search.best_of_hand.used[index]) ranked[ranked_count++] = &search.best_of_hand.kept[index];
        }
        qsort(ranked, ranked_count, sizeof(Kept *), kept_rank);
        if ((i64)ranked_count > keep_count) ranked_count = (size_t)keep_count;
    } else {
        ranked = malloc(sizeof(Kept *));
        if (ranked == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        ranked[0] = &search.best;
        ranked_count = 1;
    }
    PyObject *entries = PyTuple_New((Py_ssize_t)ranked_count);
    for (size_t index = 0; entries != NULL && index < ranked_count; index++) {
        PyObject *moves = moves_tuple(ranked[index]);
        PyObject *entry = moves == NULL ? NULL : Py_BuildValue("(dN)", ranked[index]->balance, moves);
        if (entry == NULL || PyTuple_SetItem(entries, (Py_ssize_t)index, entry) < 0) Py_CLEAR(entries);
    }
    free(ranked);
    if (entries != NULL) {
        result = Py_BuildValue("(NnOO)", entries, (Py_ssize_t)search.seen.count,
                               search.budget_reached ? Py_True : Py_False, search.cut_off ? Py_True : Py_False);
    }
done:
    free(search.seen.keys);
    free(search.seen.used);
    free(search.path);
    free(search.best.moves);
    if (search.per_hand) best_free(&search.best_of_hand);
    return result;
}

/* --- Sharp's play-outs (rollout.play_out) -------------------------------------------------------------------
 * A play-out in C, step for step as rollout.py's: the same turns, the same draws from the stock, the others'
 * moves by normal's rule (normal.normal_move) reading the round's shared draws in the same order, sharp's own
 * turns by the search above at the play-outs' node budget, and the same result and work. */

/* rollout.MAX_PLAY_OUT_TURNS and search.GIFT_COST; the module's constants() gives them for the check at
 * import. */
#define MAX_PLAY_OUT_TURNS 400
#define GIFT_COST 3.0
#define MAX_SEATS 4

typedef struct {
    int seat, players;
    u64 side_cards, corner_cards;
    int king_pile_to_corner, draw_at_end, draw_until_playable, blocked_everyone_scores;
    /* The round's shared draws (rollout.SharedDraws): the values drawn so far and its generator's random(),
     * which makes the next one; `next` is this play-out's next draw (PlayOutRandom._next). */
    PyObject *values, *random;
    i64 next;
    Search search;
} PlayOut;

/* PlayOutRandom.uniform(m): int(draw(next) * m), the draw read from the shared values, made (and kept) when it
 * is the first to ask for it, as SharedDraws.draw does. -1 with an exception set when that fails. */
static i64 uniform(PlayOut *play_out, i64 m) {
    i64 index = play_out->next;
    play_out->next = index + 1;
    Py_ssize_t made = PyList_Size(play_out->values);
    if (made < 0) return -1;
    double drawn;
    if (index < (i64)made) {
        drawn = PyFloat_AsDouble(PyList_GetItem(play_out->values, (Py_ssize_t)index));
        if (drawn == -1.0 && PyErr_Occurred()) return -1;
    } else {
        PyObject *value = PyObject_CallNoArgs(play_out->random);
        if (value == NULL) return -1;
        drawn = PyFloat_AsDouble(value);
        int appended = PyList_Append(play_out->values, value);
        Py_DECREF(value);
        if ((drawn == -1.0 && PyErr_Occurred()) || appended < 0) return -1;
    }
    return (i64)(drawn * (double)m);
}

/* The set bit of `mask` at `index`, counting from the lowest. */
static int nth_lowest(u64 mask, i64 index) {
    for (i64 skipped = 0; skipped < index; skipped++) mask &= mask - 1;
    return lowest(mask);
}

/* table.playable. */
static u64 playable(const PlayOut *play_out, const i64 *piles) {
    u64 tops = 0, spaces = 0;
    for (int pile = 0; pile < PILE_COUNT; pile++) {
        i64 encoded = piles[pile];
        if (encoded >= 0) {
            tops |= ((u64)1) << (encoded & TOP);
        } else if (pile < SIDE_COUNT) {
            spaces |= play_out->side_cards;
        } else {
            spaces |= play_out->corner_cards;
        }
    }
    return builds_on(tops) | spaces;
}

/* normal.normal_move: 1 with `move` set, 0 when there is none, -1 with an exception set when a draw fails. */
static int normal_move(PlayOut *play_out, u64 hand, const i64 *piles, Move *move) {
    int side = -1, corner = -1;
    u64 tops = 0, movable_onto = 0;
    int king_bottom = 0;
    i64 builds = 0;
    for (int pile = 0; pile < PILE_COUNT; pile++) {
        i64 encoded = piles[pile];
        if (encoded >= 0) {
            int top = (int)(encoded & TOP);
            tops |= ((u64)1) << top;
            builds += popcount(FITTERS[top] & hand);
            if (pile < SIDE_COUNT) {
                int bottom = (int)(encoded >> BOTTOM_SHIFT);
                movable_onto |= TARGETS[bottom];
                king_bottom = king_bottom || (KINGS >> bottom & 1);
            }
        } else if (pile < SIDE_COUNT) {
            if (side < 0) side = pile;
        } else if (corner < 0) {
            corner = pile;
        }
    }
    if (corner >= 0) {
        u64 kings = hand & KINGS & play_out->corner_cards;
        if (kings) {
            i64 chosen = uniform(play_out, popcount(kings));
            if (chosen < 0) return -1;
            move->kind = PLAY;
            move->a = nth_lowest(kings, chosen);
            move->b = corner;
            return 1;
        }
    }
    if (builds) {
        /* normal._nth_build: pile by pile, lowest card first. */
        i64 index = uniform(play_out, builds);
        if (index < 0) return -1;
        for (int pile = 0; pile < PILE_COUNT; pile++) {
            i64 encoded = piles[pile];
            if (encoded < 0) continue;
            u64 fitting = FITTERS[encoded & TOP] & hand;
            i64 count = popcount(fitting);
            if (index < count) {
                move->kind = PLAY;
                move->a = nth_lowest(fitting, index);
                move->b = pile;
                return 1;
            }
            index -= count;
        }
        PyErr_SetString(PyExc_ValueError, "fewer plays onto piles than the index");
        return -1;
    }
    if ((tops & movable_onto) || (king_bottom && play_out->king_pile_to_corner)) {
        Move moving[SIDE_COUNT * (PILE_COUNT - 1)];
        int count = pile_moves(play_out->king_pile_to_corner, piles, tops, moving);
        if (count) {
            i64 chosen = uniform(play_out, count);
            if (chosen < 0) return -1;
            *move = moving[chosen];
            return 1;
        }
    }
    u64 into_side = side >= 0 ? hand & play_out->side_cards : 0;
    u64 into_corner = corner >= 0 ? hand & play_out->corner_cards & ~KINGS : 0;
    if (!(into_side | into_corner)) return 0;
    int card = highest(into_side | into_corner);
    move->kind = PLAY;
    move->a = card;
    move->b = (into_side >> card & 1) ? side : corner;
    return 1;
}

/* rollout._own_turn: sharp's turn by the search (keep 1, no deadline), its best end position played. 0 with an
 * exception set on no memory. */
static int own_turn(PlayOut *play_out, u64 *hands, i64 *piles, u64 *on_table, int *played, i64 *spent) {
    int seat = play_out->seat;
    u64 hand = hands[seat];
    /* search.threat_of over the hands' sizes, summed in seat order. */
    double threat = 0.0;
    for (int other = 0; other < play_out->players; other++) {
        if (other == seat) continue;
        int count = popcount(hands[other]);
        threat += 1.0 / (double)(count > 1 ? count : 1);
    }
    Search *search = &play_out->search;
    memset(search->seen.used, 0, search->seen.capacity);
    search->seen.count = 0;
    search->unseen = ALL_CARDS & ~hand & ~*on_table;
    search->gift_cost = GIFT_COST * threat;
    search->awaited = ~built_on(search->unseen);
    search->budget_reached = search->cut_off = search->failed = 0;
    search->best.balance = -INFINITY;
    search->best.order = 0;
    search->best.length = 0;
    search->path_length = 0;
    visit(search, hand, piles);
    if (search->failed) {
        PyErr_NoMemory();
        return 0;
    }
    int did_play = 0;
    for (int index = 0; index < search->best.length; index++) {
        const Move *move = &search->best.moves[index];
        hand = apply_move(hand, piles, move);
        if (move->kind == PLAY) {
            did_play = 1;
            *on_table |= ((u64)1) << move->a;
        }
    }
    hands[seat] = hand;
    *played = did_play;
    *spent = (i64)search->seen.count;
    return 1;
}

/* rollout._normal_turn. 0 with an exception set when a draw fails. */
static int normal_turn(PlayOut *play_out, u64 *hands, int seat, i64 *piles, u64 *on_table, int *played,
                       i64 *spent) {
    u64 hand = hands[seat];
    int did_play = 0;
    i64 work = 1;
    while (hand) {
        Move move;
        int found = normal_move(play_out, hand, piles, &move);
        if (found < 0) return 0;
        if (!found) break;
        work++;
        hand = apply_move(hand, piles, &move);
        if (move.kind == PLAY) {
            did_play = 1;
            *on_table |= ((u64)1) << move.a;
        }
    }
    hands[seat] = hand;
    *played = did_play;
    *spent = work;
    return 1;
}

/* rollout._blocked_share. */
static double blocked_share(const PlayOut *play_out, const u64 *hands) {
    int penalties[MAX_SEATS] = {0};
    int fewest = CARD_COUNT + 1;
    for (int seat = 0; seat < play_out->players; seat++) {
        penalties[seat] = popcount(hands[seat] & NOT_KINGS) + 10 * popcount(hands[seat] & KINGS);
        if (popcount(hands[seat]) < fewest) fewest = popcount(hands[seat]);
    }
    if (!play_out->blocked_everyone_scores) {
        for (int seat = 0; seat < play_out->players; seat++) {
            if (popcount(hands[seat]) == fewest) penalties[seat] = 0;
        }
    }
    int lowest_penalty = penalties[0], sharing = 0;
    for (int seat = 1; seat < play_out->players; seat++) {
        if (penalties[seat] < lowest_penalty) lowest_penalty = penalties[seat];
    }
    for (int seat = 0; seat < play_out->players; seat++) sharing += penalties[seat] == lowest_penalty;
    if (penalties[play_out->seat] != lowest_penalty) return 0.0;
    return 1.0 / (double)sharing;
}

/* rollout.play_out's loop; 0 with an exception set on failure. */
static int play_out_loop(PlayOut *play_out, u64 *hands, int *stock, Py_ssize_t *stock_length, i64 *piles,
                         u64 on_table, int played, i64 idle_turns, double *value, i64 *work) {
    int seat = play_out->seat, current = seat;
    *work = 0;
    for (int turn = 0; turn < MAX_PLAY_OUT_TURNS; turn++) {
        int stock_was_empty = *stock_length == 0;
        if (play_out->draw_at_end && *stock_length) hands[current] |= ((u64)1) << stock[--*stock_length];
        idle_turns = played || !stock_was_empty ? 0 : idle_turns + 1;
        if (idle_turns >= play_out->players) {
            *value = blocked_share(play_out, hands);
            return 1;
        }
        current = (current + 1) % play_out->players;
        if (!play_out->draw_at_end && *stock_length) {
            hands[current] |= ((u64)1) << stock[--*stock_length];
            if (play_out->draw_until_playable) {
                while (*stock_length && !(hands[current] & playable(play_out, piles))) {
                    hands[current] |= ((u64)1) << stock[--*stock_length];
                }
            }
        }
        i64 spent;
        int ok = current == seat ? own_turn(play_out, hands, piles, &on_table, &played, &spent)
                                 : normal_turn(play_out, hands, current, piles, &on_table, &played, &spent);
        if (!ok) return 0;
        *work += spent;
        if (!hands[current]) {
            *value = current == seat ? 1.0 : 0.0;
            return 1;
        }
    }
    *value = blocked_share(play_out, hands);
    return 1;
}

static int flag_of(PyObject *value, int *out) {
    int read = PyObject_IsTrue(value);
    if (read < 0) return 0;
    *out = read;
    return 1;
}

PyDoc_STRVAR(play_out_doc,
             "play_out(seat, players, side_cards, corner_cards, king_pile_to_corner, draw_at_end, "
             "draw_until_playable, blocked_everyone_scores, hands, stock, piles, on_table, played, idle_turns, "
             "values, random, next, node_budget) -> (value, work, next)\n\n"
             "rollout.play_out's work: `hands` (a list of masks) and `stock` (a list of cards, its top last) are "
             "played out in place (left as they were if it fails); `values` and `random` are the round's "
             "SharedDraws (its draws so far, and its generator's random), `next` the play-out's first draw; "
             "returns the seat's share of the win, the work, and the next draw.");

static PyObject *play_out_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 18) {
        PyErr_SetString(PyExc_TypeError, "play_out() takes 18 arguments");
        return NULL;
    }
    PlayOut play_out;
    memset(&play_out, 0, sizeof play_out);
    i64 seat, players, idle_turns, node_budget;
    u64 on_table;
    int played;
    i64 piles[PILE_COUNT];
    u64 hands[MAX_SEATS];
    int stock[CARD_COUNT];
    if (!i64_of(args[0], &seat) || !i64_of(args[1], &players)) return NULL;
    if (players < 2 || players > MAX_SEATS || seat < 0 || seat >= players) {
        PyErr_SetString(PyExc_ValueError, "2 to 4 players, and the seat one of them");
        return NULL;
    }
    play_out.seat = (int)seat;
    play_out.players = (int)players;
    if (!u64_of(args[2], &play_out.side_cards) || !u64_of(args[3], &play_out.corner_cards)) return NULL;
    if (!flag_of(args[4], &play_out.king_pile_to_corner) || !flag_of(args[5], &play_out.draw_at_end) ||
        !flag_of(args[6], &play_out.draw_until_playable) || !flag_of(args[7], &play_out.blocked_everyone_scores)) {
        return NULL;
    }
    PyObject *hand_list = args[8], *stock_list = args[9];
    if (!PyList_Check(hand_list) || PyList_Size(hand_list) != players) {
        PyErr_SetString(PyExc_TypeError, "hands must be a list of one mask a seat");
        return NULL;
    }
    for (int index = 0; index < players; index++) {
        if (!u64_of(PyList_GetItem(hand_list, index), &hands[index])) return NULL;
        if (hands[index] > ALL_CARDS) {
            PyErr_SetString(PyExc_ValueError, "a card mask is below 2**52");
            return NULL;
        }
    }
    if (!PyList_Check(stock_list) || PyList_Size(stock_list) > CARD_COUNT) {
        PyErr_SetString(PyExc_TypeError, "stock must be a list of at most 52 cards");
        return NULL;
    }
    Py_ssize_t stock_length = PyList_Size(stock_list);
    for (Py_ssize_t index = 0; index < stock_length; index++) {
        i64 card;
        if (!i64_of(PyList_GetItem(stock_list, index), &card)) return NULL;
        if (card < 0 || card >= CARD_COUNT) {
            PyErr_SetString(PyExc_ValueError, "a card is 0 to 51");
            return NULL;
        }
        stock[index] = (int)card;
    }
    if (!piles_of(args[10], piles)) return NULL;
    if (!u64_of(args[11], &on_table) || !flag_of(args[12], &played) || !i64_of(args[13], &idle_turns)) {
        return NULL;
    }
    if (idle_turns < 0 || idle_turns > players) {
        PyErr_SetString(PyExc_ValueError, "idle_turns is 0 to the number of players");
        return NULL;
    }
    if (on_table > ALL_CARDS || play_out.side_cards > ALL_CARDS || play_out.corner_cards > ALL_CARDS) {
        PyErr_SetString(PyExc_ValueError, "a card mask is below 2**52");
        return NULL;
    }
    if (!PyList_Check(args[14]) || !PyCallable_Check(args[15])) {
        PyErr_SetString(PyExc_TypeError, "values must be a list and random callable");
        return NULL;
    }
    play_out.values = args[14];
    play_out.random = args[15];
    if (!i64_of(args[16], &play_out.next) || !i64_of(args[17], &node_budget)) return NULL;
    if (play_out.next < 0 || node_budget < 1) {
        PyErr_SetString(PyExc_ValueError, "the next draw is at least 0 and the node budget at least 1");
        return NULL;
    }
    Search *search = &play_out.search;
    search->side_cards = play_out.side_cards;
    search->corner_cards = play_out.corner_cards;
    search->corner_kings = play_out.corner_cards & KINGS;
    search->corner_fill = play_out.corner_cards & ~KINGS;
    search->king_pile_to_corner = play_out.king_pile_to_corner;
    search->node_budget = node_budget;
    search->path_capacity = 64;
    search->path = malloc((size_t)search->path_capacity * sizeof(Move));
    size_t capacity = 256;
    while (capacity < 4096 && (i64)(capacity / 2) < node_budget) capacity *= 2;
    PyObject *result = NULL;
    if (search->path == NULL || !seen_init(&search->seen, capacity)) {
        PyErr_NoMemory();
        goto done;
    }
    double value;
    i64 work;
    if (!play_out_loop(&play_out, hands, stock, &stock_length, piles, on_table, played, idle_turns, &value,
                       &work)) {
        goto done;
    }
    /* The deal as the play-out left it, as rollout.py's leaves its lists. */
    for (int index = 0; index < players; index++) {
        PyObject *hand = PyLong_FromUnsignedLongLong(hands[index]);
        if (hand == NULL || PyList_SetItem(hand_list, index, hand) < 0) goto done;
    }
    if (PyList_SetSlice(stock_list, stock_length, PyList_Size(stock_list), NULL) < 0) goto done;
    result = Py_BuildValue("(dLL)", value, (long long)work, (long long)play_out.next);
done:
    free(search->seen.keys);
    free(search->seen.used);
    free(search->path);
    free(search->best.moves);
    return result;
}

static PyObject *masks_tuple(const u64 *masks) {
    PyObject *tuple = PyTuple_New(CARD_COUNT);
    for (int card = 0; tuple != NULL && card < CARD_COUNT; card++) {
        PyObject *mask = PyLong_FromUnsignedLongLong(masks[card]);
        if (mask == NULL || PyTuple_SetItem(tuple, card, mask) < 0) Py_CLEAR(tuple);
    }
    return tuple;
}

static PyObject *constants(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    PyObject *fitters = masks_tuple(FITTERS);
    PyObject *targets = fitters == NULL ? NULL : masks_tuple(TARGETS);
    if (targets == NULL) {
        Py_XDECREF(fitters);
        return NULL;
    }
    return Py_BuildValue("{s:d,s:(ddd),s:i,s:K,s:N,s:N,s:d,s:i}", "HELD_FOR_ME", HELD_FOR_ME, "CHAIN_WEIGHTS",
                         CHAIN_0, CHAIN_1, CHAIN_2, "CLOCK_EVERY", CLOCK_EVERY, "KINGS", (unsigned long long)KINGS,
                         "FITTERS", fitters, "TARGETS", targets, "GIFT_COST", GIFT_COST, "MAX_PLAY_OUT_TURNS",
                         MAX_PLAY_OUT_TURNS);
}

static PyMethodDef methods[] = {
    {"search", (PyCFunction)(void (*)(void))search_run, METH_FASTCALL, search_doc},
    {"play_out", (PyCFunction)(void (*)(void))play_out_run, METH_FASTCALL, play_out_doc},
    {"constants", constants, METH_NOARGS, "The search's weights as this module holds them."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT,
    "_search_native",
    "Sharp's search in C (games/engine/players/search.py uses it where it was built).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__search_native(void) {
    cards_tables_make();
    return PyModule_Create(&module_definition);
}
