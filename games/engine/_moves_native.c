/* The legal moves of a position (games/engine/game.py's position_moves) in C: the same moves in the same order,
 * read from the same hand and piles of card codes, so that random play, every computer turn's observation and
 * every game view list them for a fraction of the cost (tests/engine/test_moves_native.py compares the two on
 * many positions, valid and not). game.py documents what the moves are and in what order; this file only says
 * where C differs in how it gets there.
 *
 * Built by setup.py beside the mypyc-compiled engine, against the stable ABI (Python 3.11 and later); where
 * nothing compiles, and in the pure-Python build, game.py lists the moves itself. A card is an index 0..51 in
 * masks.CARDS's order (rank A..K, then suit C D H S), read straight from its two-character code rather than
 * looked up in masks.CARD_INDEX; a code that is not a card raises KeyError, as that lookup does. */

#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

typedef uint64_t u64;

#define PILE_COUNT 8
#define SIDE_COUNT 4
#define CARD_COUNT 52
#define RANK_COUNT 13
#define SUIT_COUNT 4
#define ALL_CARDS ((((u64)1) << CARD_COUNT) - 1)

static const char RANKS[] = "A23456789TJQK";
static const char SUITS[] = "CDHS";

/* A code's first character's rank (0..12) and second's suit (0..3), -1 for any other character. */
static signed char RANK_OF[256];
static signed char SUIT_OF[256];
static u64 FITTERS[CARD_COUNT];
static u64 KINGS;
static u64 NIBBLES;
static u64 BLACK;
static u64 RED;

/* The moves as game.py shares them (moves.PLAY_OF_CODE, PILE_MOVE_OF_CODE) and the piles' names (moves.PILES),
 * given once by bind(); NULL until then. */
static PyObject *PLAY_OF_CODE;
static PyObject *PILE_MOVE_OF_CODE;
static PyObject *PILE_NAMES[PILE_COUNT];

static int rank_of(int card) { return card / SUIT_COUNT + 1; }
static int is_red(int card) { return card % SUIT_COUNT == 1 || card % SUIT_COUNT == 2; }

static void tables_make(void) {
    for (int byte = 0; byte < 256; byte++) RANK_OF[byte] = SUIT_OF[byte] = -1;
    for (int rank = 0; rank < RANK_COUNT; rank++) RANK_OF[(unsigned char)RANKS[rank]] = (signed char)rank;
    for (int suit = 0; suit < SUIT_COUNT; suit++) SUIT_OF[(unsigned char)SUITS[suit]] = (signed char)suit;
    NIBBLES = 0;
    for (int rank = 0; rank < RANK_COUNT; rank++) NIBBLES |= ((u64)1) << (4 * rank);
    BLACK = NIBBLES * 9; /* 0b1001: C and S */
    RED = NIBBLES * 6;   /* 0b0110: D and H */
    KINGS = 0;
    for (int card = 0; card < CARD_COUNT; card++) {
        if (rank_of(card) == RANK_COUNT) KINGS |= ((u64)1) << card;
        u64 fitting = 0;
        for (int other = 0; other < CARD_COUNT; other++) {
            if (rank_of(other) + 1 == rank_of(card) && is_red(other) != is_red(card)) fitting |= ((u64)1) << other;
        }
        FITTERS[card] = fitting;
    }
}

/* masks.built_on: the cards that any card of `cards` builds on. */
static u64 built_on(u64 cards) {
    u64 black = ((cards & BLACK) | (cards & BLACK) >> 3) & NIBBLES;
    u64 red = ((cards & RED) >> 1 | (cards & RED) >> 2) & NIBBLES;
    return ((black << 1 | black << 2 | red | red << 3) << 4) & ALL_CARDS;
}

/* The card's index, or -1 with an exception set: TypeError for what is not a string (as the compiled game.py
 * raises), KeyError for any other string (as masks.CARD_INDEX[card] raises). */
static int card_index(PyObject *card) {
    if (!PyUnicode_Check(card)) {
        PyErr_SetString(PyExc_TypeError, "a card is a string");
        return -1;
    }
    Py_ssize_t length;
    const char *text = PyUnicode_AsUTF8AndSize(card, &length);
    if (text == NULL) {
        /* Not encodable (a lone surrogate): not a card either. */
        PyErr_Clear();
    } else if (length == 2) {
        int rank = RANK_OF[(unsigned char)text[0]], suit = SUIT_OF[(unsigned char)text[1]];
        if (rank >= 0 && suit >= 0) return rank * SUIT_COUNT + suit;
    }
    PyErr_SetObject(PyExc_KeyError, card);
    return -1;
}

/* The hand's cards as a mask (game._hand_mask); 0 with an exception set on a failure. A list or tuple is read in
 * place, any other iterable through its iterator. */
static int hand_mask(PyObject *hand, u64 *mask) {
    *mask = 0;
    if (PyList_Check(hand) || PyTuple_Check(hand)) {
        int is_list = PyList_Check(hand);
        Py_ssize_t length = is_list ? PyList_Size(hand) : PyTuple_Size(hand);
        for (Py_ssize_t index = 0; index < length; index++) {
            int card = card_index(is_list ? PyList_GetItem(hand, index) : PyTuple_GetItem(hand, index));
            if (card < 0) return 0;
            *mask |= ((u64)1) << card;
        }
        return 1;
    }
    PyObject *iterator = PyObject_GetIter(hand);
    if (iterator == NULL) return 0;
    PyObject *item;
    while ((item = PyIter_Next(iterator)) != NULL) {
        int card = card_index(item);
        Py_DECREF(item);
        if (card < 0) {
            Py_DECREF(iterator);
            return 0;
        }
        *mask |= ((u64)1) << card;
    }
    Py_DECREF(iterator);
    return !PyErr_Occurred();
}

/* A pile's top card's index and, for a side (`sided`), its bottom card's (each -1 for an empty pile); 0 with an
 * exception set on a failure. A corner's bottom card is never read, as game.py never reads it. A pile is a list,
 * as the compiled game.py requires. */
static int pile_ends(PyObject *pile, int sided, int *bottom, int *top) {
    *bottom = *top = -1;
    if (!PyList_Check(pile)) {
        PyErr_SetString(PyExc_TypeError, "a pile is a list of cards");
        return 0;
    }
    Py_ssize_t length = PyList_Size(pile);
    if (length == 0) return 1;
    *top = card_index(PyList_GetItem(pile, length - 1));
    if (*top < 0) return 0;
    if (!sided) return 1;
    *bottom = card_index(PyList_GetItem(pile, 0));
    return *bottom >= 0;
}

static int u64_of(PyObject *value, u64 *out) {
    *out = PyLong_AsUnsignedLongLong(value);
    return !(*out == (u64)-1 && PyErr_Occurred());
}

static int append_shared(PyObject *moves, PyObject *table, int code) {
    PyObject *move = PyTuple_GetItem(table, code);
    return move != NULL && PyList_Append(moves, move) == 0;
}

PyDoc_STRVAR(position_moves_doc,
             "position_moves(hand, piles, side_cards, corner_cards, king_pile_to_corner, /)\n--\n\n"
             "game.position_moves's moves, given the masks of the cards that may start an empty side and an "
             "empty corner (game._space_cards) and whether a King's pile may move into an empty corner.");

static PyObject *position_moves(PyObject *module, PyObject *const *args, Py_ssize_t count) {
    (void)module;
    if (count != 5) {
        PyErr_SetString(PyExc_TypeError, "position_moves takes 5 arguments");
        return NULL;
    }
    if (PLAY_OF_CODE == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "position_moves needs bind() first");
        return NULL;
    }
    u64 held, side_cards, corner_cards;
    int king_pile_to_corner = PyObject_IsTrue(args[4]);
    if (king_pile_to_corner < 0 || !u64_of(args[2], &side_cards) || !u64_of(args[3], &corner_cards)) return NULL;
    if (!hand_mask(args[0], &held)) return NULL;
    PyObject *piles = args[1];
    int is_dict = PyDict_CheckExact(piles);
    int tops[PILE_COUNT], bottoms_of[PILE_COUNT];
    u64 fitting[PILE_COUNT], playable = 0, bottoms = 0, tops_mask = 0;
    unsigned empty_corners = 0;
    for (int index = 0; index < PILE_COUNT; index++) {
        PyObject *pile;
        if (is_dict) {
            pile = PyDict_GetItemWithError(piles, PILE_NAMES[index]);
            if (pile == NULL) {
                if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, PILE_NAMES[index]);
                return NULL;
            }
            Py_INCREF(pile);
        } else {
            pile = PyObject_GetItem(piles, PILE_NAMES[index]);
            if (pile == NULL) return NULL;
        }
        int read = pile_ends(pile, index < SIDE_COUNT, &bottoms_of[index], &tops[index]);
        Py_DECREF(pile);
        if (!read) return NULL;
        int top = tops[index];
        if (top >= 0) {
            fitting[index] = FITTERS[top] & held;
            tops_mask |= ((u64)1) << top;
            if (index < SIDE_COUNT) bottoms |= ((u64)1) << bottoms_of[index];
        } else if (index < SIDE_COUNT) {
            fitting[index] = side_cards & held;
        } else {
            fitting[index] = corner_cards & held;
            empty_corners |= 1u << index;
        }
        playable |= fitting[index];
    }
    PyObject *moves = PyList_New(0);
    if (moves == NULL) return NULL;
    /* The plays by card, then pile: the order of their sorted codes (card * 8 + pile), without the sort. */
    while (playable) {
        int card = __builtin_ctzll(playable);
        playable &= playable - 1;
        for (int index = 0; index < PILE_COUNT; index++) {
            if (fitting[index] >> card & 1 && !append_shared(moves, PLAY_OF_CODE, card << 3 | index)) goto failed;
        }
    }
    int king_to_corner = king_pile_to_corner && empty_corners != 0;
    if (!((built_on(bottoms) & tops_mask) || (king_to_corner && (bottoms & KINGS)))) return moves;
    for (int source = 0; source < SIDE_COUNT; source++) {
        int bottom = bottoms_of[source];
        if (bottom < 0) continue;
        for (int target = 0; target < PILE_COUNT; target++) {
            int top = tops[target];
            if (target == source) continue;
            int opens = top >= 0 ? (int)(FITTERS[top] >> bottom & 1)
                                 : king_to_corner && (empty_corners >> target & 1) && (KINGS >> bottom & 1);
            if (opens && !append_shared(moves, PILE_MOVE_OF_CODE, source << 3 | target)) goto failed;
        }
    }
    return moves;
failed:
    Py_DECREF(moves);
    return NULL;
}

PyDoc_STRVAR(bind_doc,
             "bind(play_of_code, pile_move_of_code, piles, /)\n--\n\n"
             "Gives the module the shared moves (moves.PLAY_OF_CODE, moves.PILE_MOVE_OF_CODE) and the piles' "
             "names (moves.PILES), in their orders.");

/* Holds `value` at `slot` in place of what it held. */
static void replace(PyObject **slot, PyObject *value) {
    PyObject *old = *slot;
    Py_INCREF(value);
    *slot = value;
    Py_XDECREF(old);
}

static PyObject *bind(PyObject *module, PyObject *const *args, Py_ssize_t count) {
    (void)module;
    if (count != 3) {
        PyErr_SetString(PyExc_TypeError, "bind takes 3 arguments");
        return NULL;
    }
    if (!PyTuple_Check(args[0]) || PyTuple_Size(args[0]) != CARD_COUNT * PILE_COUNT || !PyTuple_Check(args[1]) ||
        PyTuple_Size(args[1]) != PILE_COUNT * PILE_COUNT || !PyTuple_Check(args[2]) ||
        PyTuple_Size(args[2]) != PILE_COUNT) {
        PyErr_SetString(PyExc_TypeError, "bind takes the 416 plays, the 64 pile moves and the 8 piles' names");
        return NULL;
    }
    for (int index = 0; index < PILE_COUNT; index++) {
        if (!PyUnicode_Check(PyTuple_GetItem(args[2], index))) {
            PyErr_SetString(PyExc_TypeError, "a pile's name is a string");
            return NULL;
        }
    }
    replace(&PLAY_OF_CODE, args[0]);
    replace(&PILE_MOVE_OF_CODE, args[1]);
    for (int index = 0; index < PILE_COUNT; index++) replace(&PILE_NAMES[index], PyTuple_GetItem(args[2], index));
    Py_RETURN_NONE;
}

static PyObject *cards(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    PyObject *tuple = PyTuple_New(CARD_COUNT);
    for (int card = 0; tuple != NULL && card < CARD_COUNT; card++) {
        char code[3] = {RANKS[card / SUIT_COUNT], SUITS[card % SUIT_COUNT], 0};
        PyObject *text = PyUnicode_FromString(code);
        if (text == NULL || PyTuple_SetItem(tuple, card, text) < 0) Py_CLEAR(tuple);
    }
    return tuple;
}

static PyMethodDef methods[] = {
    {"position_moves", (PyCFunction)(void (*)(void))position_moves, METH_FASTCALL, position_moves_doc},
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL, bind_doc},
    {"cards", cards, METH_NOARGS, "The cards' codes by index, as this module reads them."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT,
    "_moves_native",
    "A position's legal moves in C (games/engine/game.py uses it where it was built).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__moves_native(void) {
    tables_make();
    return PyModule_Create(&module_definition);
}
