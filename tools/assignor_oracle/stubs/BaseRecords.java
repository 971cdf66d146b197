package org.apache.kafka.common.record;
public interface BaseRecords { int sizeInBytes(); }
