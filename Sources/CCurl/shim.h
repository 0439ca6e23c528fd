#ifndef NSE_CCURL_SHIM_H
#define NSE_CCURL_SHIM_H

#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>

/* libcurl is loaded on first use (dlopen), not linked: linking it makes every nse process load libcurl's ~30
   dependent libraries (TLS, Kerberos, LDAP, …) and resolve their relocations at start-up, about 10 ms, even for
   commands that never make an HTTP request. Only Sources/NSEHTTP/Curl.swift calls these functions. */

typedef struct nse_curl_api {
    int loaded;
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
    CURLMcode (*multi_wakeup)(CURLM *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} nse_curl_api;

/* Function-local statics: Swift emits the inline functions that own them, where a file-level static would not be. */
static inline nse_curl_api *nse_curl_table_storage(void) {
    static nse_curl_api table;
    return &table;
}

static inline pthread_once_t *nse_curl_once_storage(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    return &once;
}

#define nse_curl_table (*nse_curl_table_storage())

static inline void nse_curl_resolve(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
#define NSE_CURL_SYMBOL(field, name) \
    *(void **)(&nse_curl_table.field) = dlsym(library, name); \
    if (!nse_curl_table.field) return;
    NSE_CURL_SYMBOL(global_init, "curl_global_init")
    NSE_CURL_SYMBOL(easy_init, "curl_easy_init")
    NSE_CURL_SYMBOL(easy_cleanup, "curl_easy_cleanup")
    NSE_CURL_SYMBOL(easy_strerror, "curl_easy_strerror")
    NSE_CURL_SYMBOL(easy_setopt, "curl_easy_setopt")
    NSE_CURL_SYMBOL(easy_getinfo, "curl_easy_getinfo")
    NSE_CURL_SYMBOL(multi_init, "curl_multi_init")
    NSE_CURL_SYMBOL(multi_cleanup, "curl_multi_cleanup")
    NSE_CURL_SYMBOL(multi_add_handle, "curl_multi_add_handle")
    NSE_CURL_SYMBOL(multi_remove_handle, "curl_multi_remove_handle")
    NSE_CURL_SYMBOL(multi_perform, "curl_multi_perform")
    NSE_CURL_SYMBOL(multi_poll, "curl_multi_poll")
    NSE_CURL_SYMBOL(multi_wakeup, "curl_multi_wakeup")
    NSE_CURL_SYMBOL(multi_info_read, "curl_multi_info_read")
    NSE_CURL_SYMBOL(slist_append, "curl_slist_append")
    NSE_CURL_SYMBOL(slist_free_all, "curl_slist_free_all")
#undef NSE_CURL_SYMBOL
    nse_curl_table.loaded = 1;
}

/* Loads libcurl once; 0 when it is not installed. Call before anything below. */
static inline int nse_curl_load(void) {
    pthread_once(nse_curl_once_storage(), nse_curl_resolve);
    return nse_curl_table.loaded;
}

static inline CURLcode nse_curl_global_init(long flags) { return nse_curl_table.global_init(flags); }
static inline CURL *nse_curl_easy_init(void) { return nse_curl_table.easy_init(); }
static inline void nse_curl_easy_cleanup(CURL *handle) { nse_curl_table.easy_cleanup(handle); }
static inline const char *nse_curl_easy_strerror(CURLcode code) { return nse_curl_table.easy_strerror(code); }
static inline CURLM *nse_curl_multi_init(void) { return nse_curl_table.multi_init(); }
static inline CURLMcode nse_curl_multi_cleanup(CURLM *multi) { return nse_curl_table.multi_cleanup(multi); }
static inline CURLMcode nse_curl_multi_add_handle(CURLM *multi, CURL *handle) { return nse_curl_table.multi_add_handle(multi, handle); }
static inline CURLMcode nse_curl_multi_remove_handle(CURLM *multi, CURL *handle) { return nse_curl_table.multi_remove_handle(multi, handle); }
static inline CURLMcode nse_curl_multi_perform(CURLM *multi, int *running) { return nse_curl_table.multi_perform(multi, running); }
static inline CURLMcode nse_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout, int *ready) {
    return nse_curl_table.multi_poll(multi, extra, count, timeout, ready);
}
static inline CURLMcode nse_curl_multi_wakeup(CURLM *multi) { return nse_curl_table.multi_wakeup(multi); }
static inline CURLMsg *nse_curl_multi_info_read(CURLM *multi, int *remaining) { return nse_curl_table.multi_info_read(multi, remaining); }
static inline struct curl_slist *nse_curl_slist_append(struct curl_slist *list, const char *text) { return nse_curl_table.slist_append(list, text); }
static inline void nse_curl_slist_free_all(struct curl_slist *list) { nse_curl_table.slist_free_all(list); }

/* Swift cannot call C variadic functions, so every curl_easy_setopt /
   curl_easy_getinfo use goes through one of these typed wrappers. */

typedef size_t (*nse_curl_data_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);
typedef int (*nse_curl_xferinfo_callback)(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                                          curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode nse_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return nse_curl_table.easy_setopt(handle, option, value);
}

static inline CURLcode nse_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return nse_curl_table.easy_setopt(handle, option, value);
}

static inline CURLcode nse_curl_easy_setopt_ptr(CURL *handle, CURLoption option, void *value) {
    return nse_curl_table.easy_setopt(handle, option, value);
}

static inline CURLcode nse_curl_easy_setopt_str(CURL *handle, CURLoption option, const char *value) {
    return nse_curl_table.easy_setopt(handle, option, value);
}

static inline CURLcode nse_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return nse_curl_table.easy_setopt(handle, option, value);
}

static inline CURLcode nse_curl_easy_setopt_write_callback(CURL *handle, nse_curl_data_callback callback) {
    return nse_curl_table.easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

static inline CURLcode nse_curl_easy_setopt_header_callback(CURL *handle, nse_curl_data_callback callback) {
    return nse_curl_table.easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}

static inline CURLcode nse_curl_easy_setopt_xferinfo_callback(CURL *handle, nse_curl_xferinfo_callback callback) {
    return nse_curl_table.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

static inline CURLcode nse_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return nse_curl_table.easy_getinfo(handle, info, value);
}

static inline CURLcode nse_curl_easy_getinfo_double(CURL *handle, CURLINFO info, double *value) {
    return nse_curl_table.easy_getinfo(handle, info, value);
}

static inline CURLcode nse_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return nse_curl_table.easy_getinfo(handle, info, value);
}

static inline CURLcode nse_curl_easy_getinfo_str(CURL *handle, CURLINFO info, char **value) {
    return nse_curl_table.easy_getinfo(handle, info, value);
}

#endif
