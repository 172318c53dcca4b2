// Apple's ne_socket.h API, exported under Apple's names. Each returns 0 or an errno value.
#include "lnp_core.h"

int ne_socket_set_attribution(int socket, int attribution) { return lnp_api_set_attribution(socket, attribution); }

int ne_socket_set_domains(int socket, const char *const *const domain_names, int domain_count) {
    return lnp_api_set_domains(socket, domain_names, domain_count);
}

int ne_socket_set_website_attribution(int socket, const char *hostname) {
    return lnp_api_set_website_attribution(socket, hostname);
}
