/* A name resolver the deadline tests control: loaded with LD_PRELOAD into
 * the launcher, it makes every lookup of a name under never-answers.test
 * hang (as a resolver that never replies would) and passes the rest on. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netdb.h>
#include <string.h>
#include <unistd.h>

typedef int (*getaddrinfo_fn)(const char *, const char *, const struct addrinfo *,
                              struct addrinfo **);

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res) {
    if (node != NULL && strstr(node, "never-answers.test") != NULL) {
        for (;;) {
            sleep(3600);
        }
    }
    getaddrinfo_fn real = (getaddrinfo_fn)dlsym(RTLD_NEXT, "getaddrinfo");
    return real(node, service, hints, res);
}
