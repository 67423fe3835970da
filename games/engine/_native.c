/* The rules engine's hottest paths in C: a position's legal moves (games/engine/game.py's position_moves), the
 * deterministic shuffle (games/engine/deal.py's shuffle) and easy's whole turn (players/levels.py's decision for
 * "easy", players/easy.py over players/table.py's moves). The same moves in the same order, read from the same
 * hand and piles of card codes, the same deck from the same seed and the same turn from the same position and
 * stream, so that random play, every computer turn's observation, every game view, every deal and every easy
 * turn cost a fraction of what they did (tests/engine/test_native.py compares each with its Python on many
 * inputs, valid and not). The Python documents what they do; this file only says where C differs in how it
 * gets there.
 *
 * Built by setup.py beside the mypyc-compiled engine, against the stable ABI (Python 3.11 and later); where
 * nothing compiles, and in the pure-Python build, game.py and deal.py do it themselves. A card is an index 0..51
 * in masks.CARDS's order (rank A..K, then suit C D H S), read straight from its two-character code rather than
 * looked up in masks.CARD_INDEX; a code that is not a card raises KeyError, as that lookup does (easy's turn
 * declines it instead, for levels.py to refuse as it does). */

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

/* The same block with the x86 SHA extensions, where the processor has them (most since 2016-2019): the stream's
 * blocks are most of what a deal and an easy turn compute. The same words as sha_block (tests/engine/test_native.py
 * compares the digests with hashlib's, whichever runs). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>

#define SHA_NI 1

__attribute__((target("sha,sse4.1,ssse3"))) static void sha_block_ni(uint32_t state[8],
                                                                    const unsigned char block[64]) {
    const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    /* The state as the instructions hold it: A B E F and C D G H. */
    __m128i dcba = _mm_loadu_si128((const __m128i *)&state[0]);
    __m128i hgfe = _mm_loadu_si128((const __m128i *)&state[4]);
    __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
    __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
    __m128i abef_before = abef, cdgh_before = cdgh;
    __m128i words[4];
    for (int group = 0; group < 4; group++) {
        words[group] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(block + 16 * group)), byte_swap);
    }
    for (int group = 0; group < 16; group++) {
        __m128i message = _mm_add_epi32(words[group & 3], _mm_loadu_si128((const __m128i *)&SHA_K[4 * group]));
        cdgh = _mm_sha256rnds2_epu32(cdgh, abef, message);
        abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(message, 0x0E));
        if (group < 12) {
            /* Words 4(group+4) .. 4(group+4)+3 of the schedule, in the slot of the four just used. */
            __m128i next = _mm_sha256msg1_epu32(words[group & 3], words[(group + 1) & 3]);
            next = _mm_add_epi32(next, _mm_alignr_epi8(words[(group + 3) & 3], words[(group + 2) & 3], 4));
            words[group & 3] = _mm_sha256msg2_epu32(next, words[(group + 3) & 3]);
        }
    }
    abef = _mm_add_epi32(abef, abef_before);
    cdgh = _mm_add_epi32(cdgh, cdgh_before);
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(dchg, feba, 8));
}

static int sha_ni_present(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    int sse41 = (ecx >> 19) & 1, ssse3 = (ecx >> 9) & 1;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return 0;
    return sse41 && ssse3 && ((ebx >> 29) & 1);
}
#endif

/* The block function this processor runs: sha_block_ni where it can, else sha_block (set at import). */
static void (*sha_compress)(uint32_t state[8], const unsigned char block[64]) = sha_block;

static void sha_choose(int allow_extensions) {
    sha_compress = sha_block;
#ifdef SHA_NI
    if (allow_extensions && sha_ni_present()) sha_compress = sha_block_ni;
#else
    (void)allow_extensions;
#endif
}

/* The digest's eight words (big-endian, as deal.SeededStream unpacks them) of `length` bytes of `data`. */
static void sha256_words(const unsigned char *data, size_t length, uint32_t digest[8]) {
    static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(digest, initial, sizeof initial);
    size_t whole = length / 64 * 64;
    for (size_t offset = 0; offset < whole; offset += 64) sha_compress(digest, data + offset);
    unsigned char tail[128] = {0};
    size_t left = length - whole;
    memcpy(tail, data + whole, left);
    tail[left] = 0x80;
    size_t tail_length = left + 9 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)length * 8;
    for (int byte = 0; byte < 8; byte++) tail[tail_length - 1 - byte] = (unsigned char)(bits >> (8 * byte));
    sha_compress(digest, tail);
    if (tail_length == 128) sha_compress(digest, tail + 64);
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

/* --- easy's turn ----------------------------------------------------------------------------------------- */

/* A pile as players/table.py encodes it: -1 when empty; a side bottom * 64 + top; a corner its top alone. */
#define TOP_BITS 63
#define BOTTOM_SHIFT 6

/* table.table_moves (every space offered) as codes: a play card << 3 | pile, a pile move 1 << 9 | source << 3 |
 * target; plays pile by pile, each pile's cards low to high, then pile moves by source, then target. */
static int easy_moves(u64 hand, const i64 *piles, u64 side_cards, u64 corner_cards, int king_pile_to_corner,
                      int *codes) {
    int count = 0;
    for (int pile = 0; pile < PILE_COUNT; pile++) {
        i64 encoded = piles[pile];
        u64 fitting = encoded >= 0 ? FITTERS[encoded & TOP_BITS] & hand
                                   : (pile < SIDE_COUNT ? side_cards : corner_cards) & hand;
        while (fitting) {
            codes[count++] = __builtin_ctzll(fitting) << 3 | pile;
            fitting &= fitting - 1;
        }
    }
    for (int source = 0; source < SIDE_COUNT; source++) {
        i64 moving = piles[source];
        if (moving < 0) continue;
        int bottom = (int)(moving >> BOTTOM_SHIFT);
        int into_corner = king_pile_to_corner && (KINGS >> bottom & 1);
        for (int target = 0; target < PILE_COUNT; target++) {
            if (target == source) continue;
            i64 encoded = piles[target];
            if (encoded >= 0 ? (int)(FITTERS[encoded & TOP_BITS] >> bottom & 1) : target >= SIDE_COUNT && into_corner)
                codes[count++] = 1 << 9 | source << 3 | target;
        }
    }
    return count;
}

/* table.apply_move on a code of easy_moves. */
static u64 easy_apply(u64 hand, i64 *piles, int code) {
    int a = code >> 3 & 63, b = code & 7;
    if (!(code >> 9)) {
        i64 encoded = piles[b];
        piles[b] = encoded >= 0 ? encoded - (encoded & TOP_BITS) + a : (b < SIDE_COUNT ? (i64)a << BOTTOM_SHIFT | a : a);
        return hand & ~(((u64)1) << a);
    }
    i64 top = piles[a] & TOP_BITS, onto = piles[b];
    piles[b] = onto >= 0 ? onto - (onto & TOP_BITS) + top : top;
    piles[a] = -1;
    return hand;
}

PyDoc_STRVAR(easy_turn_doc,
             "easy_turn(game_seed, hand_number, seat, turn, hand, piles, side_cards, corner_cards, "
             "king_pile_to_corner, /)\n--\n\n"
             "Easy's whole turn as players/levels.py plays it from the seat's observation: the turn's stream "
             "(levels.turn_stream), then players/easy.py's easy_turn over table.table_moves. Its moves as the "
             "engine's shared move objects, and whether the hand still holds cards (the turn then ends with "
             "END_TURN); None where the hand or piles are not plain lists, dicts and card codes, the hand holds "
             "a card twice, a pile is missing or a number does not fit the stream's bytes, for levels.py to "
             "play (or refuse).");

static PyObject *easy_turn(PyObject *module, PyObject *const *args, Py_ssize_t count) {
    (void)module;
    if (count != 9) {
        PyErr_SetString(PyExc_TypeError, "easy_turn takes 9 arguments");
        return NULL;
    }
    if (PLAY_OF_CODE == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "easy_turn needs bind() first");
        return NULL;
    }
    if (!PyBytes_CheckExact(args[0]) || !PyLong_CheckExact(args[1]) || !PyLong_CheckExact(args[2]) ||
        !PyLong_CheckExact(args[3]) || !PyDict_CheckExact(args[5]))
        Py_RETURN_NONE;
    /* Numbers that to_bytes would refuse (negative, or too wide) are declined: levels.py raises as it does. */
    long long numbers[3];
    for (int index = 0; index < 3; index++) {
        numbers[index] = PyLong_AsLongLong(args[1 + index]);
        if (numbers[index] == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
    }
    long long hand_number = numbers[0], seat = numbers[1], turn = numbers[2];
    if (hand_number < 0 || hand_number > 0xffffffffLL || seat < 0 || seat > 0xff || turn < 0 || turn > 0xffffffffLL)
        Py_RETURN_NONE;
    u64 side_cards, corner_cards, hand;
    int king_pile_to_corner = PyObject_IsTrue(args[8]);
    if (king_pile_to_corner < 0 || !u64_of(args[6], &side_cards) || !u64_of(args[7], &corner_cards)) return NULL;
    int read = hand_mask(args[4], &hand);
    if (read != READ) goto not_read;
    /* A card held twice, which the mask cannot tell from once: the Python refuses it (table.cards_mask). */
    if (__builtin_popcountll(hand) != (PyList_CheckExact(args[4]) ? PyList_Size(args[4]) : PyTuple_Size(args[4])))
        Py_RETURN_NONE;
    i64 piles[PILE_COUNT];
    for (int index = 0; index < PILE_COUNT; index++) {
        PyObject *pile = PyDict_GetItemWithError(args[5], PILE_NAMES[index]);
        if (pile == NULL) {
            if (PyErr_Occurred()) return NULL;
            Py_RETURN_NONE;
        }
        int bottom, top;
        read = pile_ends(pile, index < SIDE_COUNT, &bottom, &top);
        if (read != READ) goto not_read;
        piles[index] = top < 0 ? -1 : (index < SIDE_COUNT ? (i64)bottom << BOTTOM_SHIFT | top : top);
    }
    /* levels.turn_stream: SHA-256(game_seed || "players" || hand number (4) || seat (1) || turn (4)) seeds it. */
    char *game_seed;
    Py_ssize_t seed_length;
    if (PyBytes_AsStringAndSize(args[0], &game_seed, &seed_length) < 0) return NULL;
    size_t material_length = (size_t)seed_length + 7 + 4 + 1 + 4;
    unsigned char *material = PyMem_Malloc(material_length);
    if (material == NULL) return PyErr_NoMemory();
    unsigned char *at = material;
    memcpy(at, game_seed, (size_t)seed_length);
    at += seed_length;
    memcpy(at, "players", 7);
    at += 7;
    for (int byte = 3; byte >= 0; byte--) *at++ = (unsigned char)(hand_number >> (8 * byte));
    *at++ = (unsigned char)seat;
    for (int byte = 3; byte >= 0; byte--) *at++ = (unsigned char)(turn >> (8 * byte));
    uint32_t digest[8];
    sha256_words(material, material_length, digest);
    PyMem_Free(material);
    unsigned char message[32 + 8];
    for (int word = 0; word < 8; word++) {
        for (int byte = 0; byte < 4; byte++) message[4 * word + byte] = (unsigned char)(digest[word] >> (8 * (3 - byte)));
    }
    Stream stream = {message, 32, 0, {0}, 8};
    /* easy.easy_turn: before each move, a one-in-three chance of stopping; then any legal move at random. */
    int codes[CARD_COUNT * PILE_COUNT + SIDE_COUNT * PILE_COUNT];
    int chosen[CARD_COUNT + 64];
    int played = 0;
    /* A pile move empties a side, which only a play from the hand fills again: a turn holds at most the hand's
     * plays (under 52) and a pile move for each of them and for each side, inside `chosen`. */
    while (hand && played < (int)(sizeof chosen / sizeof chosen[0])) {
        int open = easy_moves(hand, piles, side_cards, corner_cards, king_pile_to_corner, codes);
        if (!open || uniform(&stream, 3) == 0) break;
        int code = codes[uniform(&stream, (u64)open)];
        hand = easy_apply(hand, piles, code);
        chosen[played++] = code;
    }
    PyObject *moves = PyList_New(played);
    if (moves == NULL) return NULL;
    for (int index = 0; index < played; index++) {
        int code = chosen[index];
        PyObject *move = PyTuple_GetItem(code >> 9 ? PILE_MOVE_OF_CODE : PLAY_OF_CODE, code & 511);
        if (move == NULL) {
            Py_DECREF(moves);
            return NULL;
        }
        Py_INCREF(move);
        if (PyList_SetItem(moves, index, move) < 0) {
            Py_DECREF(moves);
            return NULL;
        }
    }
    return Py_BuildValue("(NO)", moves, hand ? Py_True : Py_False);
not_read:
    /* Not plain data, or not a card (KeyError set): levels.py plays it, and refuses it as it does. */
    if (read == FAILED) PyErr_Clear();
    Py_RETURN_NONE;
}

PyDoc_STRVAR(sha_blocks_doc,
             "sha_blocks(extensions, /)\n--\n\n"
             "Which SHA-256 block function the stream runs from now on: with `extensions` true the processor's "
             "SHA instructions where it has them (the default), else the portable C. Returns 'sha_ni' or "
             "'portable', whichever now runs (for the tests, which check both against hashlib).");

static PyObject *sha_blocks(PyObject *module, PyObject *extensions) {
    (void)module;
    int allow = PyObject_IsTrue(extensions);
    if (allow < 0) return NULL;
    sha_choose(allow);
    return PyUnicode_FromString(sha_compress == sha_block ? "portable" : "sha_ni");
}

static PyMethodDef methods[] = {
    {"shuffle", (PyCFunction)(void (*)(void))shuffle, METH_FASTCALL, shuffle_doc},
    {"position_moves", (PyCFunction)(void (*)(void))position_moves, METH_FASTCALL, position_moves_doc},
    {"easy_turn", (PyCFunction)(void (*)(void))easy_turn, METH_FASTCALL, easy_turn_doc},
    {"sha_blocks", sha_blocks, METH_O, sha_blocks_doc},
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
    sha_choose(1);
    return PyModule_Create(&module_definition);
}
