/* What the PDFium text source (pdfium_source.py) reads of every character of a text page,
 * and of every segment of a path, copied into arrays in one call: the source's ctypes calls
 * per character and per segment cost more than PDFium's work behind them (about 0.3 us for
 * FPDFText_GetTextObject, 0.4 us for FPDFText_GetLooseCharBox, against a few nanoseconds here).
 *
 * Not linked against PDFium: the caller passes the addresses of PDFium's functions from the
 * library pypdfium2 has loaded (`_PdfiumFunctions` in pdfium_source.py, same order), so this
 * file needs no PDFium header nor library to build:
 *
 *     cc -O2 -shared -fPIC -o conversion/engine/_pdfium_chars.so conversion/engine/_pdfium_chars.c
 *
 * (`make helpers`). Without the built library the source makes the same calls from Python.
 */
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
} pdfium_functions;

/* Flags of `flags[i]`. */
#define CHAR_GENERATED 1 /* FPDFText_IsGenerated answered other than 0 */
#define CHAR_OBJECT_INFO 2 /* `sizes[i]` and `matrices[i]` were read (a text object's run starts) */
#define CHAR_MATRIX 4 /* FPDFText_GetMatrix answered (else matrices[i] is 0) */

/* What `states` holds of a text object, STATE_FIELDS per character (read where sizes are). */
#define STATE_FIELDS 7 /* FPDFPageObj_GetFillColor's answer, its r, g, b, a, the render mode, the MCID */

/* The layout of the arrays; `svcx_pdfium_chars_abi` answers it, and the source uses the
 * library only when it matches its own (a library built from an older file is not called). */
#define ABI 3

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
