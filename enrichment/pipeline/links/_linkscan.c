/*
 * The fast path of link detection, in C: the markdown spans of the common chat
 * message and the bare URL tokens between them. The pure-Python reference is
 * ``enrichment.pipeline.links.detection.python_candidates`` (with
 * ``markdown_spans.simple_link_spans``); the tests check that both agree.
 *
 * candidates(text) -> list[tuple[str, str | None]] | None
 *
 *   ``text`` is a message already stripped of JS whitespace. The result lists each
 *   bare http(s) token of the text once markdown inline links, images and autolinks
 *   are removed, trimmed of trailing punctuation, in order, duplicates included, each
 *   paired with its host when the token is a plain ASCII URL (``links._SIMPLE_URL``
 *   with a port of at most 65535), else None. None instead of a list means the text
 *   is not simple enough for this path: the caller runs the full CommonMark scan.
 *   This path may give up on more texts than the Python one; it never answers
 *   differently.
 *
 * Every index is checked against the text length before it is read; nothing is
 * written except the result.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    PyObject *str;
    const void *data; /* the code units: Py_UCS1 or Py_UCS4 */
    Py_ssize_t length;
} Text;

/* ---- Spans ------------------------------------------------------------------------ */

/* start, end pairs; room for the common message inline, on the heap beyond that. */
typedef struct {
    Py_ssize_t *items;
    Py_ssize_t count;
    Py_ssize_t capacity;
    Py_ssize_t inline_items[64];
} Spans;

static void spans_init(Spans *spans) {
    spans->items = spans->inline_items;
    spans->count = 0;
    spans->capacity = 64;
}

static void spans_free(Spans *spans) {
    if (spans->items != spans->inline_items) {
        PyMem_Free(spans->items);
    }
}

static int spans_add(Spans *spans, Py_ssize_t start, Py_ssize_t end) {
    if (spans->count + 2 > spans->capacity) {
        Py_ssize_t capacity = spans->capacity * 2;
        Py_ssize_t *items = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)capacity);
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(items, spans->items, sizeof(Py_ssize_t) * (size_t)spans->count);
        spans_free(spans);
        spans->items = items;
        spans->capacity = capacity;
    }
    spans->items[spans->count++] = start;
    spans->items[spans->count++] = end;
    return 0;
}

/* Results of the scanners below. */
#define SIMPLE 1
#define NOT_SIMPLE 0
#define FAILED -1

static int is_ascii_letter(Py_UCS4 c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static int is_ascii_digit(Py_UCS4 c) { return c >= '0' && c <= '9'; }
static int is_ascii_alnum(Py_UCS4 c) { return is_ascii_letter(c) || is_ascii_digit(c); }
static int is_control_or_space(Py_UCS4 c) { return c <= 0x20 || c == 0x7f; }

static int is_js_whitespace(Py_UCS4 c) {
    if (c < 0x80) {
        return c == ' ' || (c >= '\t' && c <= '\r');
    }
    return c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
           c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000 || c == 0xfeff;
}

static int is_trailing_punctuation(Py_UCS4 c) {
    return c == ',' || c == '.' || c == ';' || c == ':' || c == '?' || c == '!' || c == '"' ||
           c == '\'' || c == 0x2026;
}

static Py_UCS4 opener_of(Py_UCS4 c) {
    switch (c) {
    case ')': return '(';
    case ']': return '[';
    case '}': return '{';
    case '>': return '<';
    default: return 0;
    }
}

/* The scanners, once for 1-byte strings (most messages) and once for UCS-4 copies. */
#define F(name) name##_ucs1
#define CHAR_T Py_UCS1
#include "_linkscan_scan.h"
#undef F
#undef CHAR_T
#define F(name) name##_ucs4
#define CHAR_T Py_UCS4
#include "_linkscan_scan.h"
#undef F
#undef CHAR_T

static PyObject *candidates(PyObject *Py_UNUSED(module), PyObject *arg) {
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "candidates() expects a str");
        return NULL;
    }
    if (PyUnicode_READY(arg) < 0) {
        return NULL;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(arg);
    if (PyUnicode_KIND(arg) == PyUnicode_1BYTE_KIND) {
        Text text = {arg, PyUnicode_1BYTE_DATA(arg), length};
        return scan_ucs1(&text);
    }
    Py_UCS4 *wide = PyUnicode_AsUCS4Copy(arg);
    if (wide == NULL) {
        return NULL;
    }
    Text text = {arg, wide, length};
    PyObject *out = scan_ucs4(&text);
    PyMem_Free(wide);
    return out;
}

static PyMethodDef methods[] = {
    {"candidates", candidates, METH_O,
     "candidates(text) -> list of (token, host or None), or None if the text needs the "
     "full markdown scan."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "_linkscan",
    .m_doc = "Fast path of link detection (see links.py).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__linkscan(void) { return PyModule_Create(&module); }
