/* What the PDFium text source (pdfium_source.py) reads of every character of a text page,
 * and of every segment of a path, copied into arrays in one call: the source's ctypes calls
 * per character and per segment cost more than PDFium's work behind them (about 0.3 us for
 * FPDFText_GetTextObject, 0.4 us for FPDFText_GetLooseCharBox, against a few nanoseconds here).
 *
 * Not linked against PDFium: the caller passes the addresses of PDFium's functions from the
 * library pypdfium2 has loaded (`_PdfiumFunctions` in pdfium_source.py, same order), so this
 * file needs no PDFium header nor library to build:
 *
 *     cc -O2 -ffp-contract=off -shared -fPIC -o conversion/engine/_pdfium_chars.so conversion/engine/_pdfium_chars.c
 *
 * (`make helpers`). Without the built library the source makes the same calls from Python.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* PDFium's FS_RECTF and FS_MATRIX (fpdfview.h). */
typedef struct {
    float left, top, right, bottom;
} rect_f;

typedef struct {
    float a, b, c, d, e, f;
} matrix_f;

/* The PDFium functions read, in this order (the calling convention is the platform's C one:
 * FPDF_CALLCONV is empty outside Windows). */
typedef struct {
    unsigned int (*get_unicode)(void *textpage, int index);
    int (*is_generated)(void *textpage, int index);
    void *(*get_text_object)(void *textpage, int index);
    int (*get_loose_char_box)(void *textpage, int index, rect_f *rect);
    int (*get_char_origin)(void *textpage, int index, double *x, double *y);
    double (*get_font_size)(void *textpage, int index);
    int (*get_matrix)(void *textpage, int index, matrix_f *matrix);
    void *(*get_path_segment)(void *path, int index);
    int (*segment_type)(void *segment);
    int (*segment_point)(void *segment, float *x, float *y);
    int (*segment_close)(void *segment);
    int (*fill_color)(void *object, unsigned int *r, unsigned int *g, unsigned int *b, unsigned int *a);
    int (*render_mode)(void *text_object);
    void *(*text_font)(void *text_object);
    int (*marked_content_id)(void *object);
    int (*has_unicode_map_error)(void *textpage, int index);
} pdfium_functions;

/* Flags of `flags[i]`. */
#define CHAR_GENERATED 1 /* FPDFText_IsGenerated answered other than 0 */
#define CHAR_OBJECT_INFO 2 /* `sizes[i]` and `matrices[i]` were read (a text object's run starts) */
#define CHAR_MATRIX 4 /* FPDFText_GetMatrix answered (else matrices[i] is 0) */
#define SPACE_ADVANCE_SHARE 0.1 /* layout.SPACE_ADVANCE_SHARE */
#define CHAR_UNMAPPED 8 /* FPDFText_HasUnicodeMapError answered other than 0: the unicode is the code */

/* What `states` holds of a text object, STATE_FIELDS per character (read where sizes are). */
#define STATE_FIELDS 7 /* FPDFPageObj_GetFillColor's answer, its r, g, b, a, the render mode, the MCID */

/* The layout of the arrays and of `lines_args`; `svcx_pdfium_chars_abi` answers it, and the
 * source uses the library only when it matches its own (a library built from an older file is
 * not called). 4: `svcx_pdfium_runs` and `svcx_pdfium_lines`; 5: CHAR_UNMAPPED. */
#define ABI 5

int svcx_pdfium_chars_abi(void) { return ABI; }

/* Characters 0 to n - 1 of `textpage` into the arrays: `boxes` 4n floats, the lefts of the
 * n characters' loose boxes then their tops, rights and bottoms; `origins` 2n doubles, the
 * x then the y of each; `matrices` 6n floats, a to f of each. A call that fails leaves its
 * values 0 (PDFium's text calls fail only on an index out of range). The font size and
 * matrix are read only where the text object differs from the previous character's (the
 * flag CHAR_OBJECT_INFO; the source reads them once per text object), 0 elsewhere; so are
 * the text object's `states` (STATE_FIELDS each) and font handle (`fonts`), where the
 * character has a text object. Returns n. */
int svcx_pdfium_chars(const pdfium_functions *fn, void *textpage, int n, uint32_t *unicodes, uint8_t *flags,
                      uintptr_t *objects, float *boxes, double *origins, double *sizes, float *matrices,
                      int32_t *states, uintptr_t *fonts) {
    void *previous = 0;
    for (int i = 0; i < n; i++) {
        uint8_t flag = 0;
        rect_f rect = {0.0f, 0.0f, 0.0f, 0.0f};
        double x = 0.0, y = 0.0;
        unicodes[i] = fn->get_unicode(textpage, i);
        if (fn->is_generated(textpage, i))
            flag |= CHAR_GENERATED;
        if (fn->has_unicode_map_error(textpage, i))
            flag |= CHAR_UNMAPPED;
        void *object = fn->get_text_object(textpage, i);
        objects[i] = (uintptr_t)object;
        fn->get_loose_char_box(textpage, i, &rect);
        boxes[i] = rect.left;
        boxes[n + i] = rect.top;
        boxes[2 * n + i] = rect.right;
        boxes[3 * n + i] = rect.bottom;
        fn->get_char_origin(textpage, i, &x, &y);
        origins[i] = x;
        origins[n + i] = y;
        matrix_f matrix = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
        sizes[i] = 0.0;
        if (i == 0 || object != previous) {
            flag |= CHAR_OBJECT_INFO;
            sizes[i] = fn->get_font_size(textpage, i);
            if (fn->get_matrix(textpage, i, &matrix))
                flag |= CHAR_MATRIX;
            if (object) {
                unsigned int r = 0, g = 0, b = 0, a = 0;
                int32_t *state = states + STATE_FIELDS * i;
                state[0] = fn->fill_color(object, &r, &g, &b, &a);
                state[1] = (int32_t)r;
                state[2] = (int32_t)g;
                state[3] = (int32_t)b;
                state[4] = (int32_t)a;
                state[5] = fn->render_mode(object);
                state[6] = fn->marked_content_id(object);
                fonts[i] = (uintptr_t)fn->text_font(object);
            }
        }
        matrices[6 * i] = matrix.a;
        matrices[6 * i + 1] = matrix.b;
        matrices[6 * i + 2] = matrix.c;
        matrices[6 * i + 3] = matrix.d;
        matrices[6 * i + 4] = matrix.e;
        matrices[6 * i + 5] = matrix.f;
        previous = object;
        flags[i] = flag;
    }
    return n;
}

/* Segments 0 to n - 1 of the path object `path` into the arrays (each of n entries): the
 * segment's type (FPDF_SEGMENT_*; NO_SEGMENT where PDFium gives no segment), its point
 * (where FPDFPathSegment_GetPoint fails, the previous segment's: the source's calls leave
 * their buffers so), and whether it closes its subpath. Returns n. */
#define NO_SEGMENT -2

int svcx_pdfium_path(const pdfium_functions *fn, void *path, int n, float *xs, float *ys, int8_t *kinds,
                     uint8_t *closes) {
    float x = 0.0f, y = 0.0f;
    for (int i = 0; i < n; i++) {
        void *segment = fn->get_path_segment(path, i);
        if (!segment) {
            kinds[i] = NO_SEGMENT;
            xs[i] = x;
            ys[i] = y;
            closes[i] = 0;
            continue;
        }
        kinds[i] = (int8_t)fn->segment_type(segment);
        fn->segment_point(segment, &x, &y);
        xs[i] = x;
        ys[i] = y;
        closes[i] = fn->segment_close(segment) ? 1 : 0;
    }
    return n;
}

/* --- the glyphs and lines of a text page (`_PageText.read` in pdfium_source.py) ------------
 *
 * The same arithmetic as the source's Python loop, in the same order and in doubles, so that
 * every box and every decision is the same bit for bit (built with -ffp-contract=off: no fused
 * multiply-add). Where a value would leave what the Python loop computes without error (a NaN
 * or infinity turned into a count, a count past MAX_COUNT), the call answers -1 and the source
 * runs its Python loop over the page instead. */

/* A character the glyph pass never sees: a line break (PDFium's), a space PDFium generated,
 * or one without a text object. */
static int skipped(uint32_t code, uint8_t flag, uintptr_t object) {
    return code == '\r' || code == '\n' || (code == ' ' && (flag & CHAR_GENERATED)) || !object;
}

/* The runs of the characters 0 to n - 1: where each run of characters of one text object
 * starts (the characters the glyph pass skips left out), into `starts` (n at most). The source
 * reads what a text object's characters share at its run's first character. Returns the
 * count of runs. */
int svcx_pdfium_runs(int n, const uint32_t *codes, const uint8_t *flags, const uintptr_t *objects, int32_t *starts) {
    uintptr_t last = 0;
    int runs = 0;
    for (int i = 0; i < n; i++) {
        uintptr_t object = objects[i];
        if (skipped(codes[i], flags[i], object))
            continue;
        if (object != last) {
            starts[runs++] = i;
            last = object;
        }
    }
    return runs;
}

#define GLYPH_FIELDS 6

/* Counts made from a quotient (spaces) are refused past this: the Python loop is left to it. */
#define MAX_COUNT 1000000.0
/* Spaces that open a line at most (the source's _MAX_SPACE_RUN). */
#define MAX_SPACE_RUN 256

typedef struct {
    /* The characters (n): their text in UTF-32, flags, text objects, loose boxes (lefts, tops,
     * rights, bottoms) and origins (xs, ys), as `svcx_pdfium_chars` fills them. */
    int n;
    const uint32_t *codes;
    const uint8_t *flags;
    const uintptr_t *objects;
    const float *boxes;
    const double *origins;
    /* The runs (`svcx_pdfium_runs`) and, of each, its text object's font size as drawn, descent,
     * whether it is upright and its place in drawing order. */
    int runs;
    const int32_t *starts;
    const double *sizes;
    const double *descents;
    const uint8_t *upright;
    const int32_t *orders;
    /* The text objects that draw only spaces: drawing order, x and y of the origin. */
    int spaces;
    const int32_t *space_orders;
    const double *space_xs;
    const double *space_ys;
    /* The page's matrix, whether it only translates, whether the page has right-to-left text,
     * whether to group the glyphs into lines (else only the glyphs), pdfminer's LAParams and
     * the source's tolerance of loose boxes. */
    double ctm[6];
    int translate;
    int rtl;
    int group;
    double line_overlap, char_margin, word_margin, loose;
    /* Out, per glyph (n at most): its first character, run, count of characters (more than
     * one: a ligature, the others marked in `appended`, per character), box (GLYPH_FIELDS
     * doubles: x0, y0, x1, y1, x1 as first made, and where the spaces that open its line
     * start), and the word spaces put before it in its line (k >= 0), or -1 - k where it opens
     * a line after k spaces. */
    int32_t *glyph_starts;
    int32_t *glyph_runs;
    int32_t *glyph_chars;
    double *glyph_boxes;
    int32_t *glyph_spaces;
    uint8_t *appended;
    /* Out, per line (n at most): its box (x0, y0, x1, y1). */
    double *line_boxes;
    int glyphs;
    int lines;
} lines_args;

/* Python's min and max of a sequence: the first value that no later one passes. */
static double min4(const double *v) {
    double m = v[0];
    for (int k = 1; k < 4; k++)
        if (v[k] < m)
            m = v[k];
    return m;
}

static double max4(const double *v) {
    double m = v[0];
    for (int k = 1; k < 4; k++)
        if (v[k] > m)
            m = v[k];
    return m;
}

/* The bounding box under `m` of a rectangle's corners (the source's `_box`). */
static void transformed(const double *m, double x0, double y0, double x1, double y1, double *out) {
    const double px[4] = {x0, x1, x1, x0}, py[4] = {y0, y0, y1, y1};
    double xs[4], ys[4];
    for (int k = 0; k < 4; k++) {
        xs[k] = m[0] * px[k] + m[2] * py[k] + m[4];
        ys[k] = m[1] * px[k] + m[3] * py[k] + m[5];
    }
    out[0] = min4(xs);
    out[1] = min4(ys);
    out[2] = max4(xs);
    out[3] = max4(ys);
}

/* The glyphs of the characters, as `_PageText.read` makes them, and with `group` their lines
 * as it groups them (pdfminer's group_objects, the spaces PDFium dropped, the space objects
 * that open or join a line). Returns the count of glyphs, -1 where the Python loop must
 * decide (see above; nothing is to be read of the outputs then). */
int svcx_pdfium_lines(lines_args *a) {
    const int n = a->n;
    const float *lefts = a->boxes, *tops = a->boxes + n, *rights = a->boxes + 2 * (size_t)n,
                *bottoms = a->boxes + 3 * (size_t)n;
    const double *origin_xs = a->origins, *origin_ys = a->origins + n;
    const double loose = a->loose, dx = a->ctm[4], dy = a->ctm[5];
    int run = -1, glyph = -1, lines = 0, line_open = 0;
    int pending_from = -1, pending_to = -1, next_space = 0;
    uintptr_t last_object = 0, glyph_object = 0, space_object = 0;
    int has_foot = 0, upright = 1;
    double foot = 0.0, loose_height = 0.0, size = 0.0, descent = 0.0, origin_x = 0.0, origin_y = 0.0;
    double space_width = 0.0;
    double px0 = 0.0, px1 = 0.0, py0 = 0.0, py1 = 0.0, lx0 = 0.0, ly0 = 0.0, lx1 = 0.0, ly1 = 0.0;
    a->glyphs = a->lines = 0;
    for (int i = 0; i < n; i++) {
        const uint32_t code = a->codes[i];
        const uintptr_t object = a->objects[i];
        a->appended[i] = 0;
        if (skipped(code, a->flags[i], object))
            continue;
        if (object != last_object) {
            run++;
            if (run >= a->runs || a->starts[run] != i)
                return -1; /* (runs not this page's) */
            size = a->sizes[run];
            descent = a->descents[run];
            upright = a->upright[run];
            last_object = object;
            has_foot = 0;
            if (next_space < a->spaces && a->space_orders[next_space] < a->orders[run]) {
                /* Space objects drawn before this one (PDFium's text page has not their glyphs). */
                pending_from = next_space;
                while (next_space < a->spaces && a->space_orders[next_space] < a->orders[run])
                    next_space++;
                pending_to = next_space;
            }
        }
        double left = lefts[i], right = rights[i], bottom, top;
        const double loose_top = tops[i], loose_bottom = bottoms[i];
        if (upright) {
            const double height = loose_top - loose_bottom;
            const double off = height - loose_height;
            if (has_foot && !a->rtl && -loose < off && off < loose) {
                bottom = loose_bottom + foot;
            } else {
                origin_x = origin_xs[i];
                origin_y = origin_ys[i];
                bottom = origin_y - descent;
                if (!has_foot && fabs(left - origin_x) < loose) {
                    foot = bottom - loose_bottom;
                    loose_height = height;
                    has_foot = 1;
                }
            }
            top = bottom + size;
            if (a->rtl) {
                const double at = origin_x;
                if (left - at > 0.01 || at - left > 0.01) {
                    left = at;
                    if (right < at)
                        right = at;
                }
            }
        } else {
            bottom = loose_bottom;
            top = loose_top;
        }
        double x0, y0, x1, y1;
        if (a->translate) {
            x0 = left + dx;
            x1 = right + dx;
            y0 = bottom + dy;
            y1 = top + dy;
        } else {
            double box[4];
            transformed(a->ctm, left, bottom, right, top, box);
            x0 = box[0];
            y0 = box[1];
            x1 = box[2];
            y1 = box[3];
        }
        if (glyph >= 0 && object == glyph_object && x0 == px0 && y0 == py0 && a->codes[a->glyph_starts[glyph]] != 0x20) {
            /* One glyph that stands for several characters (a ligature); a space is no
             * ligature's (a glyph drawn where a space of no advance is stands alone). */
            a->appended[i] = 1;
            a->glyph_chars[glyph]++;
            double *made = a->glyph_boxes + GLYPH_FIELDS * (size_t)glyph;
            if (x1 > made[2]) {
                made[2] = px1 = x1;
                if (x1 > lx1)
                    lx1 = x1;
            }
            continue;
        }
        glyph++;
        glyph_object = object;
        a->glyph_starts[glyph] = i;
        a->glyph_runs[glyph] = run;
        a->glyph_chars[glyph] = 1;
        double *made = a->glyph_boxes + GLYPH_FIELDS * (size_t)glyph;
        made[0] = x0;
        made[1] = y0;
        made[2] = x1;
        made[3] = y1;
        made[4] = x1;
        made[5] = 0.0;
        a->glyph_spaces[glyph] = 0;
        /* The previous glyph's: whether a space of this text object, and its width. */
        const uintptr_t after_space = space_object;
        const double after_width = space_width;
        if (code == ' ') {
            space_object = object;
            space_width = x1 - x0;
        } else if (space_object) {
            space_object = 0;
        }
        if (!a->group) {
            px0 = x0;
            px1 = x1;
            py0 = y0;
            continue;
        }
        int lead = -1;
        if (pending_from >= 0) {
            for (int k = pending_from; k < pending_to; k++) {
                const double sy = a->space_ys[k];
                if (y0 <= sy && sy <= y1 && a->space_xs[k] < x0) {
                    lead = k;
                    break;
                }
            }
            pending_from = -1;
        }
        if (line_open) {
            const double h1 = y1 - y0;
            const double overlap = (py1 < y1 ? py1 : y1) - (py0 > y0 ? py0 : y0);
            const double w0 = px1 - px0, w1 = x1 - x0;
            double distance;
            if (x0 <= px1 && px0 <= x1) {
                distance = 0.0;
            } else {
                distance = fabs(px0 - x1);
                const double other = fabs(px1 - x0);
                if (other < distance)
                    distance = other;
            }
            long dropped = 0;
            if (object == after_space) {
                /* `_dropped_spaces`: the spaces PDFium left out after a space glyph. */
                const double gap = x0 - px1;
                if (!(after_width <= 0 || gap < 0.5 * after_width || fabs(y0 - py0) > 0.01)) {
                    const double count = gap / after_width + 0.5;
                    if (!(count < MAX_COUNT))
                        return -1;
                    dropped = (long)count;
                }
            }
            if (lead >= 0 && a->space_xs[lead] >= px0 && py0 <= a->space_ys[lead] && a->space_ys[lead] <= py1 &&
                w1 > 0) {
                /* (not where the pen did not move over the space: the glyph within a tenth of an em of
                 * the space's origin, layout.SPACE_ADVANCE_SHARE) */
                if (a->rtl || !(x0 - a->space_xs[lead] < SPACE_ADVANCE_SHARE * size)) {
                    const double count = (x0 - px1) / w1 + 0.5;
                    if (!(count < MAX_COUNT && count > -MAX_COUNT))
                        return -1;
                    dropped = (long)count;
                    if (dropped < 1)
                        dropped = 1;
                }
                lead = -1;
            }
            const double h0 = py1 - py0;
            if (dropped || (overlap >= 0 && (h0 < h1 ? h0 : h1) * a->line_overlap < overlap &&
                            distance < (w0 > w1 ? w0 : w1) * a->char_margin)) {
                if (dropped)
                    a->glyph_spaces[glyph] = (int32_t)dropped;
                else if (px1 < x0 - a->word_margin * (w1 > h1 ? w1 : h1))
                    a->glyph_spaces[glyph] = 1;
                if (x0 < lx0)
                    lx0 = x0;
                if (y0 < ly0)
                    ly0 = y0;
                if (x1 > lx1)
                    lx1 = x1;
                if (y1 > ly1)
                    ly1 = y1;
                px0 = x0;
                px1 = x1;
                py0 = y0;
                py1 = y1;
                continue;
            }
            double *box = a->line_boxes + 4 * (size_t)lines++;
            box[0] = lx0;
            box[1] = ly0;
            box[2] = lx1;
            box[3] = ly1;
        }
        line_open = 1;
        a->glyph_spaces[glyph] = -1;
        lx0 = x0;
        ly0 = y0;
        lx1 = x1;
        ly1 = y1;
        if (lead >= 0 && x1 > x0) {
            /* The line opens with the spaces (code indented with spaces). */
            const double count = (x0 - a->space_xs[lead]) / (x1 - x0) + 0.5;
            if (!isfinite(count))
                return -1;
            const int32_t spaces = count >= MAX_SPACE_RUN ? MAX_SPACE_RUN : count < 1.0 ? 1 : (int32_t)count;
            a->glyph_spaces[glyph] = -1 - spaces;
            made[5] = a->space_xs[lead];
            lx0 = a->space_xs[lead];
        }
        px0 = x0;
        px1 = x1;
        py0 = y0;
        py1 = y1;
    }
    if (line_open) {
        double *box = a->line_boxes + 4 * (size_t)lines++;
        box[0] = lx0;
        box[1] = ly0;
        box[2] = lx1;
        box[3] = ly1;
    }
    a->glyphs = glyph + 1;
    a->lines = lines;
    return glyph + 1;
}
