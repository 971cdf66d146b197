import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Java client's side of krafka's latency and footprint benches (fixed-rate end-to-end
 * latency, commit latency, start time and resident memory), printing one JSON line.
 *
 * <pre>
 * produce BOOTSTRAP TOPIC RECORDS SIZE PARTITIONS LINGER_MS BATCH_BYTES COMPRESSION
 * consume BOOTSTRAP TOPIC RECORDS PARTITIONS
 * latency BOOTSTRAP TOPIC RATE SECONDS LINGER_MS|default SIZE [MAX_IN_FLIGHT|default]
 * commit BOOTSTRAP TOPIC COUNT
 * footprint BOOTSTRAP TOPIC RECORDS SIZE consumer|producer
 * </pre>
 */
public final class KrafkaBench {
    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "produce" -> produce(args[1], args[2], Integer.parseInt(args[3]),
                    Integer.parseInt(args[4]), Integer.parseInt(args[5]), args[6], args[7], args[8]);
            case "consume" -> consume(args[1], args[2], Integer.parseInt(args[3]),
                    Integer.parseInt(args[4]));
            case "latency" -> latency(args[1], args[2], Integer.parseInt(args[3]),
                    Double.parseDouble(args[4]), args[5], Integer.parseInt(args[6]),
                    args.length > 7 ? args[7] : "default");
            case "commit" -> commit(args[1], args[2], Integer.parseInt(args[3]));
            case "footprint" -> footprint(args[1], args[2], Integer.parseInt(args[3]),
                    Integer.parseInt(args[4]), args[5]);
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    static Properties producerProps(String bootstrap, String linger) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("acks", "1");
        if (!linger.equals("default")) {
            props.put("linger.ms", linger);
        }
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        return props;
    }

    static Properties consumerProps(String bootstrap, String group) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", group);
        props.put("enable.auto.commit", "false");
        props.put("auto.offset.reset", "earliest");
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        return props;
    }

    static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean)
                ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    static long rssBytes() throws Exception {
        return memory("VmRSS");
    }

    /** VmRSS (now) or VmHWM (peak) of this process, bytes. */
    static long memory(String key) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith(key + ":")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        return -1;
    }

    static double percentile(double[] sorted, double q) {
        int index = (int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
        return sorted[Math.max(0, index)];
    }

    /** RECORDS sent twice by one producer (the first time untimed, to warm the JIT), each
     * delivery confirmed by a callback; the second round's seconds and the process's CPU. */
    static void produce(String bootstrap, String topic, int records, int size, int partitions,
                        String linger, String batch, String compression) throws Exception {
        Properties props = producerProps(bootstrap, linger);
        props.put("batch.size", batch);
        props.put("compression.type", compression);
        Integer partition = partitions == 1 ? 0 : null;
        byte[] value = new byte[size];
        Arrays.fill(value, (byte) 'x');
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            producer.send(new ProducerRecord<>(topic, partition, null, value)).get();
            double seconds = 0;
            double cpu = 0;
            for (int round = 0; round < 2; round++) {
                long[] confirmed = {0};
                long cpu0 = cpuNanos();
                long start = System.nanoTime();
                for (int i = 0; i < records; i++) {
                    producer.send(new ProducerRecord<>(topic, partition, null, value),
                            (metadata, error) -> {
                                if (error == null) {
                                    confirmed[0]++;
                                }
                            });
                }
                producer.flush();
                seconds = (System.nanoTime() - start) / 1e9;
                cpu = (cpuNanos() - cpu0) / 1e9;
                if (confirmed[0] != records) {
                    throw new IllegalStateException("confirmed " + confirmed[0]);
                }
            }
            System.out.printf("{\"seconds\": %f, \"cpu\": %f}%n", seconds, cpu);
        }
    }

    /** The topic's first RECORDS read twice from offset 0 by a fresh consumer each time (the
     * first untimed, to warm the JIT), every value touched; the clock starts at the second
     * consumer's first record. */
    static void consume(String bootstrap, String topic, int records, int partitions)
            throws Exception {
        List<TopicPartition> assignment = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            assignment.add(new TopicPartition(topic, p));
        }
        double seconds = 0;
        double cpu = 0;
        for (int round = 0; round < 2; round++) {
            Properties props = consumerProps(bootstrap, "bench-java");
            props.put("max.poll.records", "10000");
            props.put("fetch.max.wait.ms", "100");
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
                consumer.assign(assignment);
                consumer.seekToBeginning(assignment);
                long seen = 0;
                long bytes = 0;
                long start = 0;
                long cpu0 = 0;
                while (seen < records) {
                    ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofSeconds(1));
                    if (start == 0 && !batch.isEmpty()) {
                        start = System.nanoTime();
                        cpu0 = cpuNanos();
                    }
                    for (ConsumerRecord<byte[], byte[]> record : batch) {
                        bytes += record.value().length;
                        seen++;
                    }
                }
                seconds = (System.nanoTime() - start) / 1e9;
                cpu = (cpuNanos() - cpu0) / 1e9;
                if (bytes == 0) {
                    throw new IllegalStateException("no values");
                }
            }
        }
        System.out.printf("{\"seconds\": %f, \"cpu\": %f}%n", seconds, cpu);
    }

    /** Records stamped with their intended send time (nanoTime), sent at a fixed rate to
     * partition 0 while a consumer thread reads them; latencies after the first second. */
    static void latency(String bootstrap, String topic, int rate, double seconds, String linger,
                        int size, String inFlight) throws Exception {
        int total = (int) (rate * (seconds + 1.0));
        int warm = rate;
        double[] latencies = new double[total - warm];
        TopicPartition tp = new TopicPartition(topic, 0);
        Properties props = producerProps(bootstrap, linger);
        if (!inFlight.equals("default")) {
            props.put("max.in.flight.requests.per.connection", inFlight);
        }
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props);
             KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(consumerProps(bootstrap, "bench-latency"))) {
            consumer.assign(List.of(tp));
            consumer.seekToEnd(List.of(tp));
            consumer.position(tp);
            producer.send(new ProducerRecord<>(topic, 0, null, new byte[size])).get();
            long[] received = {0};
            Thread reader = new Thread(() -> {
                int seen = 0;
                while (seen < total + 1) {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                    long now = System.nanoTime();
                    for (ConsumerRecord<byte[], byte[]> record : records) {
                        ByteBuffer value = ByteBuffer.wrap(record.value());
                        long index = value.getLong(0);
                        long sent = value.getLong(8);
                        if (index >= warm && index < total) {
                            latencies[(int) (index - warm)] = (now - sent) / 1e3;
                        }
                        seen++;
                    }
                }
                received[0] = seen;
            });
            reader.start();
            long cpu0 = cpuNanos();
            long start = System.nanoTime();
            double interval = 1e9 / rate;
            for (int i = 0; i < total; i++) {
                long due = start + (long) (i * interval);
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
                byte[] value = new byte[size];
                ByteBuffer.wrap(value).putLong(0, i).putLong(8, due);
                producer.send(new ProducerRecord<>(topic, 0, null, value));
            }
            reader.join();
            double cpu = (cpuNanos() - cpu0) / 1e9;
            Arrays.sort(latencies);
            System.out.printf("{\"p50\": %f, \"p99\": %f, \"p999\": %f, \"cpu\": %f, \"records\": %d}%n",
                    percentile(latencies, 0.5), percentile(latencies, 0.99),
                    percentile(latencies, 0.999), cpu, total);
        }
    }

    /** `commitSync` of one partition's offset, COUNT times after 20 warm-up commits (µs). */
    static void commit(String bootstrap, String topic, int count) throws Exception {
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(consumerProps(bootstrap, "bench-commit-java"))) {
            consumer.assign(List.of(tp));
            double[] times = new double[count];
            for (int i = -20; i < count; i++) {
                long start = System.nanoTime();
                consumer.commitSync(Map.of(tp, new OffsetAndMetadata(Math.max(0, i))));
                if (i >= 0) {
                    times[i] = (System.nanoTime() - start) / 1e3;
                }
            }
            Arrays.sort(times);
            System.out.printf("{\"p50\": %f, \"p99\": %f, \"p999\": %f}%n",
                    percentile(times, 0.5), percentile(times, 0.99), percentile(times, 0.999));
        }
    }

    /** consumer: seconds from the constructor to the first record, resident memory once it
     * arrived (idle) and after reading RECORDS (busy); producer: resident memory after one
     * delivered record (idle) and after sending RECORDS (busy). */
    static void footprint(String bootstrap, String topic, int records, int size, String role)
            throws Exception {
        Map<String, Double> out = new HashMap<>();
        if (role.equals("producer")) {
            produceFootprint(bootstrap, topic, records, size, out);
        } else {
            consumeFootprint(bootstrap, topic, records, out);
        }
        List<String> parts = new ArrayList<>();
        out.forEach((k, v) -> parts.add("\"" + k + "\": " + v));
        System.out.println("{" + String.join(", ", parts) + "}");
    }

    static void consumeFootprint(String bootstrap, String topic, int records,
                                 Map<String, Double> out) throws Exception {
        long constructed = System.nanoTime();
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(consumerProps(bootstrap, "bench-footprint"))) {
            consumer.assign(List.of(tp));
            int seen = 0;
            long bytes = 0;
            while (seen == 0) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                    bytes += record.value().length;
                    seen++;
                }
            }
            out.put("start", (System.nanoTime() - constructed) / 1e9);
            out.put("idle", (double) rssBytes());
            while (seen < records) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                    bytes += record.value().length;
                    seen++;
                }
            }
            out.put("busy", (double) memory("VmHWM"));
        }
    }

    static void produceFootprint(String bootstrap, String topic, int records, int size,
                                 Map<String, Double> out) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer =
                     new KafkaProducer<>(producerProps(bootstrap, "5"))) {
            producer.send(new ProducerRecord<>(topic, 0, null, new byte[size])).get();
            out.put("idle", (double) rssBytes());
            byte[] value = new byte[size];
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, value));
            }
            producer.flush();
            out.put("busy", (double) memory("VmHWM"));
        }
    }
}
