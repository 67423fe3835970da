/* The rules engine's two hottest paths in C: a position's legal moves (games/engine/game.py's position_moves) and
 * the deterministic shuffle (games/engine/deal.py's shuffle). The same moves in the same order, read from the
 * same hand and piles of card codes, and the same deck from the same seed, so that random play, every computer
 * turn's observation, every game view and every deal cost a fraction of what they did
 * (tests/engine/test_native.py compares each with its Python on many inputs, valid and not). game.py and deal.py
 * document what they do; this file only says where C differs in how it gets there.
 *
 * Built by setup.py beside the mypyc-compiled engine, against the stable ABI (Python 3.11 and later); where
 * nothing compiles, and in the pure-Python build, game.py and deal.py do it themselves. A card is an index 0..51
 * in masks.CARDS's order (rank A..K, then suit C D H S), read straight from its two-character code rather than
 * looked up in masks.CARD_INDEX; a code that is not a card raises KeyError, as that lookup does. */

#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>

#include "_cards.h"

#define PILE_COUNT 8
#define SIDE_COUNT 4

static const char RANKS[] = "A23456789TJQK";
static const char SUITS[] = "CDHS";

/* A code's first character's rank (0..12) and second's suit (0..3), -1 for any other character. */
static signed char RANK_OF[256];
static signed char SUIT_OF[256];

/* The moves as game.py shares them (moves.PLAY_OF_CODE, PILE_MOVE_OF_CODE) and the piles' names (moves.PILES),
 * given once by bind(); NULL until then. */
static PyObject *PLAY_OF_CODE;
static PyObject *PILE_MOVE_OF_CODE;
static PyObject *PILE_NAMES[PILE_COUNT];

static void tables_make(void) {
    cards_tables_make();
    for (int byte = 0; byte < 256; byte++) RANK_OF[byte] = SUIT_OF[byte] = -1;
    for (int rank = 0; rank < RANK_COUNT; rank++) RANK_OF[(unsigned char)RANKS[rank]] = (signed char)rank;
    for (int suit = 0; suit < SUIT_COUNT; suit++) SUIT_OF[(unsigned char)SUITS[suit]] = (signed char)suit;
}

/* What the C reads is plain data only: a hand that is a list or tuple, piles that are a dict of lists, cards
 * that are strings, each of exactly that type. Anything else (a subclass with its own __iter__, __getitem__ or
 * __hash__, a generator, a card that is not a string) is declined before any of it is read, and game.py lists
 * the moves itself, so that what it raises, or reads through an override, stays the Python's. Reading plain
 * data runs no Python code, so declining part way has changed nothing. */
#define READ 1
#define FAILED 0
#define DECLINED -1

/* A plain card's index (READ), or KeyError set for a string that is not a card's code, as masks.CARD_INDEX[card]
 * raises (FAILED), or DECLINED for what is not a plain string. */
static int card_index(PyObject *card, int *index) {
    if (!PyUnicode_CheckExact(card)) return DECLINED;
    Py_ssize_t length;
    const char *text = PyUnicode_AsUTF8AndSize(card, &length);
    if (text == NULL) {
        /* Not encodable (a lone surrogate): not a card either. */
        PyErr_Clear();
    } else if (length == 2) {
        int rank = RANK_OF[(unsigned char)text[0]], suit = SUIT_OF[(unsigned char)text[1]];
        if (rank >= 0 && suit >= 0) {
            *index = rank * SUIT_COUNT + suit;
            return READ;
        }
    }
    PyErr_SetObject(PyExc_KeyError, card);
    return FAILED;
}

/* The hand's cards as a mask (game._hand_mask), read in order. */
static int hand_mask(PyObject *hand, u64 *mask) {
    *mask = 0;
    int is_list = PyList_CheckExact(hand);
    if (!is_list && !PyTuple_CheckExact(hand)) return DECLINED;
    Py_ssize_t length = is_list ? PyList_Size(hand) : PyTuple_Size(hand);
    for (Py_ssize_t position = 0; position < length; position++) {
        int card, read = card_index(is_list ? PyList_GetItem(hand, position) : PyTuple_GetItem(hand, position), &card);
        if (read != READ) return read;
        *mask |= ((u64)1) << card;
    }
    return READ;
}

/* A pile's top card's index and, for a side (`sided`), its bottom card's (each -1 for an empty pile), read in
 * that order. A corner's bottom card is never read, as game.py never reads it. */
static int pile_ends(PyObject *pile, int sided, int *bottom, int *top) {
    *bottom = *top = -1;
    if (!PyList_CheckExact(pile)) return DECLINED;
    Py_ssize_t length = PyList_Size(pile);
    if (length == 0) return READ;
    int read = card_index(PyList_GetItem(pile, length - 1), top);
    if (read != READ || !sided) return read;
    return card_index(PyList_GetItem(pile, 0), bottom);
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
             "empty corner (game._space_cards) and whether a King's pile may move into an empty corner; None "
             "where the hand or piles are not plain lists, tuples, dicts and strings, for game.py to list.");

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
    int read = hand_mask(args[0], &held);
    if (read != READ) goto not_read;
    PyObject *piles = args[1];
    if (!PyDict_CheckExact(piles)) Py_RETURN_NONE;
    int tops[PILE_COUNT], bottoms_of[PILE_COUNT];
    u64 fitting[PILE_COUNT], playable = 0, bottoms = 0, tops_mask = 0;
    unsigned empty_corners = 0;
    for (int index = 0; index < PILE_COUNT; index++) {
        /* Borrowed: a plain dict's lookup of a plain string runs no Python code that could drop it. */
        PyObject *pile = PyDict_GetItemWithError(piles, PILE_NAMES[index]);
        if (pile == NULL) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, PILE_NAMES[index]);
            return NULL;
        }
        read = pile_ends(pile, index < SIDE_COUNT, &bottoms_of[index], &tops[index]);
        if (read != READ) goto not_read;
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
not_read:
    /* FAILED: the exception is set; DECLINED: None, and game.py lists the moves. */
    if (read == FAILED) return NULL;
    Py_RETURN_NONE;
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
        if (!PyUnicode_CheckExact(PyTuple_GetItem(args[2], index))) {
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

/* --- the shuffle ----------------------------------------------------------------------------------------- */

/* SHA-256 (FIPS 180-4), for the seeded stream's blocks: hashlib's digest, bit for bit (the tests compare them). */
static const uint32_t SHA_K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotate(uint32_t word, int by) { return word >> by | word << (32 - by); }

static void sha_block(uint32_t state[8], const unsigned char block[64]) {
    uint32_t w[64];
    for (int t = 0; t < 16; t++) {
        w[t] = (uint32_t)block[4 * t] << 24 | (uint32_t)block[4 * t + 1] << 16 | (uint32_t)block[4 * t + 2] << 8 |
               (uint32_t)block[4 * t + 3];
    }
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotate(w[t - 15], 7) ^ rotate(w[t - 15], 18) ^ w[t - 15] >> 3;
        uint32_t s1 = rotate(w[t - 2], 17) ^ rotate(w[t - 2], 19) ^ w[t - 2] >> 10;
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = h + (rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)) + ((e & f) ^ (~e & g)) + SHA_K[t] + w[t];
        uint32_t t2 = (rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
}

/* The digest's eight words (big-endian, as deal.SeededStream unpacks them) of `length` bytes of `data`. */
static void sha256_words(const unsigned char *data, size_t length, uint32_t digest[8]) {
    static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(digest, initial, sizeof initial);
    size_t whole = length / 64 * 64;
    for (size_t offset = 0; offset < whole; offset += 64) sha_block(digest, data + offset);
    unsigned char tail[128] = {0};
    size_t left = length - whole;
    memcpy(tail, data + whole, left);
    tail[left] = 0x80;
    size_t tail_length = left + 9 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)length * 8;
    for (int byte = 0; byte < 8; byte++) tail[tail_length - 1 - byte] = (unsigned char)(bits >> (8 * byte));
    sha_block(digest, tail);
    if (tail_length == 128) sha_block(digest, tail + 64);
}

/* deal.SeededStream: block k = SHA-256(seed || k as 8 bytes big-endian), read as 64-bit big-endian integers. */
typedef struct {
    unsigned char *message; /* the seed, then the block's number */
    size_t seed_length;
    uint64_t block;
    uint32_t words[8];
    int offset; /* the next word to read; 8: none left */
} Stream;

static u64 next_u64(Stream *stream) {
    if (stream->offset >= 8) {
        for (int byte = 0; byte < 8; byte++) {
            stream->message[stream->seed_length + (size_t)byte] = (unsigned char)(stream->block >> (8 * (7 - byte)));
        }
        sha256_words(stream->message, stream->seed_length + 8, stream->words);
        stream->block++;
        stream->offset = 0;
    }
    u64 value = (u64)stream->words[stream->offset] << 32 | stream->words[stream->offset + 1];
    stream->offset += 2;
    return value;
}

/* SeededStream.uniform: an integer in 0..m-1 without modulo bias, a draw refused at or above
 * 2^64 - (2^64 mod m). For the shuffle's bounds (2..52) this is the same value as uniform's 32-bit halves. */
static u64 uniform(Stream *stream, u64 m) {
    u64 remainder = (0 - m) % m;
    u64 value = next_u64(stream);
    while (remainder && value >= 0 - remainder) value = next_u64(stream);
    return value % m;
}

PyDoc_STRVAR(shuffle_doc,
             "shuffle(seed, deck, /)\n--\n\n"
             "deal.shuffle's deck from `seed` (bytes): the cards of `deck` (cards.DECK, 52 of them) in the order "
             "that the seeded Fisher-Yates shuffle leaves them, as a new list; None where `seed` is not plain "
             "bytes, for deal.py to shuffle.");

static PyObject *shuffle(PyObject *module, PyObject *const *args, Py_ssize_t count) {
    (void)module;
    if (count != 2) {
        PyErr_SetString(PyExc_TypeError, "shuffle takes 2 arguments");
        return NULL;
    }
    /* Anything but plain bytes is declined: deal.py shuffles it (or refuses it) itself. */
    if (!PyBytes_CheckExact(args[0])) Py_RETURN_NONE;
    if (!PyTuple_Check(args[1]) || PyTuple_Size(args[1]) != CARD_COUNT) {
        PyErr_SetString(PyExc_TypeError, "the deck is a tuple of 52 cards");
        return NULL;
    }
    char *seed;
    Py_ssize_t seed_length;
    if (PyBytes_AsStringAndSize(args[0], &seed, &seed_length) < 0) return NULL;
    Stream stream = {NULL, (size_t)seed_length, 0, {0}, 8};
    stream.message = PyMem_Malloc((size_t)seed_length + 8);
    if (stream.message == NULL) return PyErr_NoMemory();
    memcpy(stream.message, seed, (size_t)seed_length);
    int order[CARD_COUNT];
    for (int card = 0; card < CARD_COUNT; card++) order[card] = card;
    for (int i = CARD_COUNT - 1; i > 0; i--) {
        int j = (int)uniform(&stream, (u64)i + 1);
        int held = order[i];
        order[i] = order[j];
        order[j] = held;
    }
    PyMem_Free(stream.message);
    PyObject *deck = PyList_New(CARD_COUNT);
    if (deck == NULL) return NULL;
    for (int position = 0; position < CARD_COUNT; position++) {
        PyObject *card = PyTuple_GetItem(args[1], order[position]);
        Py_INCREF(card);
        if (PyList_SetItem(deck, position, card) < 0) {
            Py_DECREF(deck);
            return NULL;
        }
    }
    return deck;
}

static PyMethodDef methods[] = {
    {"shuffle", (PyCFunction)(void (*)(void))shuffle, METH_FASTCALL, shuffle_doc},
    {"position_moves", (PyCFunction)(void (*)(void))position_moves, METH_FASTCALL, position_moves_doc},
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL, bind_doc},
    {"cards", cards, METH_NOARGS, "The cards' codes by index, as this module reads them."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT,
    "_native",
    "A position's legal moves and the shuffle in C (game.py and deal.py use it where it was built).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__native(void) {
    tables_make();
    return PyModule_Create(&module_definition);
}
