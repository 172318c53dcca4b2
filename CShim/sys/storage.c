// The core's shared state lives here, in zero-initialised static storage: valid before any
// constructor has run, never allocated, inherited as-is across fork. Only the core's Swift
// code gives it meaning; see Sources/LNPCore/SharedWords.swift.
#include "lnp_sys.h"

static uint64_t settings[LNP_SETTINGS_WORDS];
static unsigned char program[LNP_PATH_CAPACITY];
static uint64_t executable_words[2];
static unsigned char executable_path[LNP_PATH_CAPACITY];
uint64_t lnp_route_cache_words[LNP_ROUTE_CACHE_ENTRIES * LNP_ROUTE_CACHE_WORDS];
static uint64_t route_snapshot[LNP_ROUTE_SNAPSHOT_HEADER_WORDS + LNP_ROUTE_SNAPSHOT_ROUTES * 4 +
                               LNP_ROUTE_SNAPSHOT_INTERFACES * 3];
static uint64_t route_staging[LNP_ROUTE_SNAPSHOT_ROUTES * 4];
static unsigned char netlink_dump[LNP_NETLINK_DUMP_SIZE] __attribute__((aligned(8)));
uint64_t lnp_clock_word;
uint64_t lnp_pass_not_local_word;
uint64_t lnp_date_word;
static uint64_t socket_flags;
static uint64_t dns_servers[LNP_EXEMPT_WORDS];
static uint64_t proxies[LNP_EXEMPT_WORDS];
static uint64_t proxy_names[LNP_PROXY_NAMES * LNP_PROXY_NAME_WORDS];
static uint64_t names[LNP_NAME_ENTRIES * LNP_NAME_WORDS];
static void *socket_tags;
static void *sent_destinations;
static void *domain_table;
static uint64_t counters[8];
static uint64_t record_holders[LNP_RECORD_BUFFERS];
static unsigned char record_buffers[LNP_RECORD_BUFFERS * LNP_RECORD_BUFFER_SIZE];
uint64_t lnp_bus_stream_count_word;
static uint64_t bus_streams[LNP_BUS_STREAMS * LNP_BUS_STREAM_WORDS];
static unsigned char bus_stream_bytes[LNP_BUS_STREAMS * 2 * LNP_BUS_HOLD];

uint64_t *lnp_storage_settings(void) { return settings; }
uint64_t *lnp_storage_route_snapshot(void) { return route_snapshot; }
uint64_t *lnp_storage_route_staging(void) { return route_staging; }
unsigned char *lnp_storage_netlink_dump(void) { return netlink_dump; }
unsigned char *lnp_storage_program(void) { return program; }
uint64_t *lnp_storage_executable_words(void) { return executable_words; }
unsigned char *lnp_storage_executable_path(void) { return executable_path; }
uint64_t *lnp_storage_dns_servers(void) { return dns_servers; }
uint64_t *lnp_storage_proxies(void) { return proxies; }
uint64_t *lnp_storage_proxy_names(void) { return proxy_names; }
uint64_t *lnp_storage_names(void) { return names; }
void **lnp_storage_socket_tags(void) { return &socket_tags; }
void **lnp_storage_sent_destinations(void) { return &sent_destinations; }
void **lnp_storage_domain_table(void) { return &domain_table; }
uint64_t *lnp_storage_counters(void) { return counters; }
uint64_t *lnp_storage_socket_flags(void) { return &socket_flags; }
uint64_t *lnp_storage_record_holders(void) { return record_holders; }
unsigned char *lnp_storage_record_buffers(void) { return record_buffers; }
uint64_t *lnp_storage_bus_streams(void) { return bus_streams; }
unsigned char *lnp_storage_bus_stream_bytes(void) { return bus_stream_bytes; }
