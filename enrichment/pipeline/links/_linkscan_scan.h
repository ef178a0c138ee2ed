/*
 * The scanners of _linkscan.c for one storage width of str: included once per width
 * with CHAR_T (the code unit type) and F(name) (the suffixed function name) defined.
 */

#define AT(t, i) ((Py_UCS4)((const CHAR_T *)(t)->data)[(i)])

/* Index of the first ``needle`` (ASCII, ``length`` > 0) in text[start:end], or -1. */
static Py_ssize_t F(find)(const Text *t, const char *needle, Py_ssize_t length,
                          Py_ssize_t start, Py_ssize_t end) {
    const CHAR_T *data = (const CHAR_T *)t->data;
    Py_ssize_t last = end - length; /* the last index a match can start at */
    for (Py_ssize_t i = start; i <= last; i++) {
        if (sizeof(CHAR_T) == 1) { /* memchr skips ahead to the first character */
            const void *found = memchr(data + i, needle[0], (size_t)(last - i + 1));
            if (found == NULL) {
                return -1;
            }
            i = (const CHAR_T *)found - data;
        }
        else if (data[i] != (CHAR_T)needle[0]) {
            continue;
        }
        Py_ssize_t k = 1;
        while (k < length && data[i + k] == (CHAR_T)needle[k]) {
            k++;
        }
        if (k == length) {
            return i;
        }
    }
    return -1;
}

static Py_ssize_t F(find_char)(const Text *t, char c, Py_ssize_t start, Py_ssize_t end) {
    return F(find)(t, &c, 1, start, end);
}

/* ``_SIMPLE_CODE_SPAN`` at i (a backtick): its end, or -1. */
static Py_ssize_t F(code_span_end)(const Text *t, Py_ssize_t i, Py_ssize_t end) {
    Py_ssize_t j = i + 1;
    while (j < end && AT(t, j) != '`' && AT(t, j) != '\n' && AT(t, j) != '\r') {
        j++;
    }
    if (j == i + 1 || j >= end || AT(t, j) != '`') {
        return -1;
    }
    j++;
    return (j < end && AT(t, j) == '`') ? -1 : j;
}

/* The URI branch of ``_AUTOLINK`` at i (a "<"): its end, or -1 (the e-mail branch
 * is left to the full scanner). */
static Py_ssize_t F(autolink_end)(const Text *t, Py_ssize_t i, Py_ssize_t end) {
    Py_ssize_t j = i + 1;
    if (j >= end || !is_ascii_letter(AT(t, j))) {
        return -1;
    }
    j++;
    Py_ssize_t scheme_start = j;
    while (j < end) {
        Py_UCS4 c = AT(t, j);
        if (!(is_ascii_alnum(c) || c == '+' || c == '.' || c == '-')) {
            break;
        }
        j++;
    }
    if (j - scheme_start < 1 || j - scheme_start > 31 || j >= end || AT(t, j) != ':') {
        return -1;
    }
    j++;
    while (j < end) {
        Py_UCS4 c = AT(t, j);
        if (is_control_or_space(c) || c == '<' || c == '>') {
            break;
        }
        j++;
    }
    return (j < end && AT(t, j) == '>') ? j + 1 : -1;
}

/* ``_SIMPLE_LINK`` at i (a "["): its end, or -1. */
static Py_ssize_t F(simple_link_end)(const Text *t, Py_ssize_t i, Py_ssize_t end) {
    Py_ssize_t j = i + 1;
    while (j < end) {
        Py_UCS4 c = AT(t, j);
        if (c == '[' || c == ']' || c == '\\' || c == '`' || c == '<' || c == '\r' ||
            c == '\n') {
            break;
        }
        j++;
    }
    if (j + 1 >= end || AT(t, j) != ']' || AT(t, j + 1) != '(') {
        return -1;
    }
    j += 2; /* past "](" */
    if (j < end && AT(t, j) != ')') {
        Py_UCS4 c = AT(t, j);
        if (is_control_or_space(c) || c == '(' || c == ')' || c == '\\' || c == '<') {
            return -1;
        }
        j++;
        while (j < end) {
            c = AT(t, j);
            if (is_control_or_space(c) || c == '(' || c == ')' || c == '\\') {
                break;
            }
            j++;
        }
        if (j < end && (AT(t, j) == ' ' || AT(t, j) == '\t')) { /* a title */
            while (j < end && (AT(t, j) == ' ' || AT(t, j) == '\t')) {
                j++;
            }
            if (j >= end || AT(t, j) != '"') {
                return -1;
            }
            j++;
            while (j < end) {
                c = AT(t, j);
                if (c == '"' || c == '\\' || c == '\r' || c == '\n') {
                    break;
                }
                j++;
            }
            if (j >= end || AT(t, j) != '"') {
                return -1;
            }
            j++;
        }
    }
    return (j < end && AT(t, j) == ')') ? j + 1 : -1;
}

/* ``markdown_spans._simple_paragraphs``: spans of text[start:end] (no fence inside). */
static int F(simple_paragraphs)(const Text *t, Py_ssize_t start, Py_ssize_t end, Spans *spans) {
    if (start >= end) {
        return SIMPLE;
    }
    if (F(find)(t, "\n    ", 5, start, end) != -1) {
        return NOT_SIMPLE; /* maybe indented code */
    }
    if (start + 4 <= end && AT(t, start) == ' ' && AT(t, start + 1) == ' ' &&
        AT(t, start + 2) == ' ' && AT(t, start + 3) == ' ') {
        return NOT_SIMPLE;
    }
    Py_ssize_t i = start;
    while (i < end) {
        Py_UCS4 c = AT(t, i);
        if (c != '[' && c != '<' && c != '`') {
            i++;
            continue;
        }
        if (i > start && AT(t, i - 1) == '\\') {
            return NOT_SIMPLE; /* an escape: the full scanner decides what it means */
        }
        Py_ssize_t opener = i, after;
        if (c == '`') {
            after = F(code_span_end)(t, i, end);
        }
        else if (c == '<') {
            after = F(autolink_end)(t, i, end);
        }
        else {
            after = F(simple_link_end)(t, i, end);
            if (i > start && AT(t, i - 1) == '!') {
                if (i - 1 > start && AT(t, i - 2) == '\\') {
                    return NOT_SIMPLE;
                }
                opener = i - 1; /* an image */
            }
        }
        if (after < 0) {
            return NOT_SIMPLE;
        }
        if (c != '`' && spans_add(spans, opener, after) < 0) {
            return FAILED;
        }
        i = after;
    }
    return SIMPLE;
}

/* End of the line holding i: the index of its "\n", or the text length. */
static Py_ssize_t F(line_content_end)(const Text *t, Py_ssize_t i) {
    while (i < t->length && AT(t, i) != '\n') {
        i++;
    }
    return i;
}

/* As ``markdown.blocks.fenced_block_end`` looks for it: the start of the first line at or
 * after ``line`` that closes a fence of ``count`` backticks, or -1. */
static Py_ssize_t F(closing_fence_line)(const Text *t, Py_ssize_t count, Py_ssize_t line) {
    while (line < t->length) {
        Py_ssize_t j = line, spaces = 0, ticks = 0;
        while (j < t->length && AT(t, j) == ' ' && spaces < 4) {
            j++;
            spaces++;
        }
        if (spaces <= 3) {
            while (j < t->length && AT(t, j) == '`') {
                j++;
                ticks++;
            }
            if (ticks >= count) {
                while (j < t->length && AT(t, j) == ' ') {
                    j++;
                }
                if (j >= t->length || AT(t, j) == '\n') {
                    return line;
                }
            }
        }
        j = F(line_content_end)(t, line);
        line = j + 1; /* past "\n" (or past the end: the loop stops) */
    }
    return -1;
}

/* ``markdown_spans.simple_link_spans`` (more conservative: "]:" and e-mail autolinks
 * send the text to the full scanner). */
static int F(simple_link_spans)(const Text *t, Spans *spans) {
    Py_ssize_t n = t->length;
    if (F(find_char)(t, '\t', 0, n) != -1 || F(find_char)(t, '\r', 0, n) != -1 ||
        F(find)(t, "~~~", 3, 0, n) != -1 || F(find)(t, "]:", 2, 0, n) != -1) {
        return NOT_SIMPLE;
    }
    Py_ssize_t start = 0;
    for (;;) {
        Py_ssize_t fence = F(find)(t, "```", 3, start, n);
        if (fence == -1) {
            break;
        }
        Py_ssize_t line = fence;
        while (line > 0 && AT(t, line - 1) != '\n') {
            line--;
        }
        for (Py_ssize_t j = line; j < fence; j++) {
            if (AT(t, j) != ' ') {
                return NOT_SIMPLE; /* three backticks inside a line */
            }
        }
        if (fence - line > 3) {
            return NOT_SIMPLE;
        }
        Py_ssize_t count = 0;
        while (fence + count < n && AT(t, fence + count) == '`') {
            count++;
        }
        Py_ssize_t content_end = F(line_content_end)(t, fence);
        if (F(find_char)(t, '`', fence + count, content_end) != -1) {
            return NOT_SIMPLE; /* a backtick in the info string: not a fence */
        }
        int simple = F(simple_paragraphs)(t, start, line, spans);
        if (simple != SIMPLE) {
            return simple;
        }
        Py_ssize_t close = content_end < n ? F(closing_fence_line)(t, count, content_end + 1) : -1;
        if (close == -1) {
            return SIMPLE; /* the fence runs to the end */
        }
        Py_ssize_t close_end = F(line_content_end)(t, close);
        start = close_end < n ? close_end + 1 : n;
    }
    return F(simple_paragraphs)(t, start, n, spans);
}

static Py_ssize_t F(count_char)(const Text *t, Py_UCS4 c, Py_ssize_t start, Py_ssize_t end) {
    Py_ssize_t count = 0;
    for (Py_ssize_t i = start; i < end; i++) {
        count += AT(t, i) == c;
    }
    return count;
}

/* ``links.trim_trailing_punctuation`` on text[start:end]: the new end. */
static Py_ssize_t F(trimmed_end)(const Text *t, Py_ssize_t start, Py_ssize_t end) {
    Py_UCS4 last = AT(t, end - 1);
    if (!is_trailing_punctuation(last) && !opener_of(last)) {
        return end;
    }
    Py_ssize_t path_end = end;
    for (Py_ssize_t i = start; i < end; i++) {
        Py_UCS4 c = AT(t, i);
        if (c == '?' || c == '#') {
            path_end = i;
            break;
        }
    }
    /* Closer and opener counts in text[start:stop], each taken the first time needed. */
    const char closers[] = ")]}>";
    Py_ssize_t closer_count[4] = {-1, -1, -1, -1}, opener_count[4] = {0, 0, 0, 0};
    Py_ssize_t stop = end;
    while (stop > start && stop <= path_end) {
        last = AT(t, stop - 1);
        Py_UCS4 opener = opener_of(last);
        if (opener) {
            int k = (int)(strchr(closers, (int)last) - closers);
            if (closer_count[k] < 0) {
                closer_count[k] = F(count_char)(t, last, start, stop);
                opener_count[k] = F(count_char)(t, opener, start, stop);
            }
            if (closer_count[k] <= opener_count[k]) {
                break;
            }
            closer_count[k]--;
        }
        else if (!is_trailing_punctuation(last)) {
            break;
        }
        stop--;
    }
    return stop;
}

/* The host of text[start:end] if it is a plain ASCII URL with a port <= 65535: sets
 * *host_start and *host_end and returns 1; else 0. */
static int F(plain_host)(const Text *t, Py_ssize_t start, Py_ssize_t end, Py_ssize_t *host_start,
                      Py_ssize_t *host_end) {
    Py_ssize_t i = start;
    while (i < end && AT(t, i) != ':') {
        i++;
    }
    i += 3; /* "://": the caller found it here */
    Py_ssize_t host = i;
    Py_UCS4 previous = '.';
    while (i < end) {
        Py_UCS4 c = AT(t, i);
        if (c == '.') {
            if (previous == '.') {
                return 0; /* an empty label */
            }
        }
        else if (!(is_ascii_alnum(c) || c == '-')) {
            break;
        }
        previous = c;
        i++;
    }
    if (i == host || previous == '.') {
        return 0;
    }
    *host_start = host;
    *host_end = i;
    if (i < end && AT(t, i) == ':') {
        Py_ssize_t digits = ++i;
        long port = 0;
        while (i < end && is_ascii_digit(AT(t, i)) && i - digits < 6) {
            port = port * 10 + (long)(AT(t, i) - '0');
            i++;
        }
        if (i == digits || i - digits > 5 || port > 65535) {
            return 0;
        }
    }
    if (i < end) {
        Py_UCS4 c = AT(t, i);
        if (c != '/' && c != '?' && c != '#' && c != '\\') {
            return 0;
        }
        for (i++; i < end; i++) {
            c = AT(t, i);
            if (c < '!' || c > '~') {
                return 0;
            }
        }
    }
    return 1;
}

static int F(is_scheme)(const Text *t, Py_ssize_t start, const char *scheme, Py_ssize_t length) {
    for (Py_ssize_t k = 0; k < length; k++) {
        Py_UCS4 c = AT(t, start + k);
        if (c != (Py_UCS4)scheme[k] && c != (Py_UCS4)(scheme[k] - 'a' + 'A')) {
            return 0;
        }
    }
    return 1;
}

/* Append (token, host or None) for each token of text[start:end] to ``out``. */
static int F(add_tokens)(const Text *t, Py_ssize_t start, Py_ssize_t end, PyObject *out) {
    Py_ssize_t pos = start;
    for (;;) {
        Py_ssize_t separator = F(find)(t, "://", 3, pos, end);
        if (separator == -1) {
            return 0;
        }
        Py_ssize_t token_start;
        if (separator - 5 >= start && F(is_scheme)(t, separator - 5, "https", 5)) {
            token_start = separator - 5;
        }
        else if (separator - 4 >= start && F(is_scheme)(t, separator - 4, "http", 4)) {
            token_start = separator - 4;
        }
        else {
            pos = separator + 1;
            continue;
        }
        Py_ssize_t token_end = separator + 3;
        while (token_end < end && !is_js_whitespace(AT(t, token_end))) {
            token_end++;
        }
        if (token_end == separator + 3) {
            pos = separator + 1;
            continue;
        }
        pos = token_end;
        token_end = F(trimmed_end)(t, token_start, token_end);
        Py_ssize_t host_start, host_end;
        PyObject *token = PyUnicode_Substring(t->str, token_start, token_end);
        if (token == NULL) {
            return -1;
        }
        PyObject *host;
        if (F(plain_host)(t, token_start, token_end, &host_start, &host_end)) {
            host = PyUnicode_Substring(t->str, host_start, host_end);
            if (host == NULL) {
                Py_DECREF(token);
                return -1;
            }
        }
        else {
            host = Py_NewRef(Py_None);
        }
        PyObject *pair = PyTuple_Pack(2, token, host);
        Py_DECREF(token);
        Py_DECREF(host);
        if (pair == NULL || PyList_Append(out, pair) < 0) {
            Py_XDECREF(pair);
            return -1;
        }
        Py_DECREF(pair);
    }
}


/* ``candidates`` for one text: the list, None, or NULL with an exception set. */
static PyObject *F(scan)(const Text *t) {
    Spans spans;
    spans_init(&spans);
    PyObject *out = NULL;
    if (F(find)(t, "](", 2, 0, t->length) != -1 || F(find_char)(t, '<', 0, t->length) != -1) {
        int simple = F(simple_link_spans)(t, &spans); /* else no link or autolink exists */
        if (simple == FAILED) {
            goto done;
        }
        if (simple == NOT_SIMPLE) {
            out = Py_NewRef(Py_None);
            goto done;
        }
    }
    out = PyList_New(0);
    if (out == NULL) {
        goto done;
    }
    Py_ssize_t gap = 0; /* the text between spans: each span stands for a space */
    for (Py_ssize_t k = 0; k < spans.count; k += 2) {
        if (F(add_tokens)(t, gap, spans.items[k], out) < 0) {
            Py_CLEAR(out);
            goto done;
        }
        gap = spans.items[k + 1];
    }
    if (F(add_tokens)(t, gap, t->length, out) < 0) {
        Py_CLEAR(out);
    }
done:
    spans_free(&spans);
    return out;
}

#undef AT
